package dev.dline.client

import java.io.DataInputStream
import java.io.InputStream
import java.lang.reflect.Constructor
import java.lang.reflect.Method
import java.nio.file.Files
import java.nio.file.Path
import java.util.zip.ZipFile

/**
 * Finds the references of compiled classes to a set of packages (here: what the IDE provides:
 * `kotlin/`, `kotlinx/coroutines/`) that the classes on [loader] cannot satisfy: a missing
 * class, or a field or method (by name and descriptor) that no class of its hierarchy declares.
 * It reads each class file's constant pool, so it finds what a JVM would fail to link
 * (`NoClassDefFoundError`, `NoSuchMethodError`) without running the code that links it.
 */
class LinkageScan(private val loader: ClassLoader, private val packages: List<String>) {
    data class Missing(val from: String, val reference: String) {
        override fun toString() = "$from -> $reference"
    }

    private val resolved = HashMap<String, Boolean>()

    /** Every class file in [roots] (folders or jars). */
    fun scan(roots: List<Path>): List<Missing> = roots.flatMap { root ->
        if (Files.isDirectory(root)) {
            Files.walk(root).use { paths ->
                paths.filter { it.toString().endsWith(".class") }.toList().flatMap { file ->
                    Files.newInputStream(file).use { scanClass(root.relativize(file).toString(), it) }
                }
            }
        } else {
            ZipFile(root.toFile()).use { zip ->
                zip.entries().toList()
                    .filter { it.name.endsWith(".class") && !it.name.startsWith("META-INF/") }
                    .flatMap { entry -> zip.getInputStream(entry).use { scanClass("${root.fileName}!/${entry.name}", it) } }
            }
        }
    }

    private fun scanClass(name: String, input: InputStream): List<Missing> {
        val pool = ConstantPool.read(DataInputStream(input.buffered()))
        val missing = mutableListOf<Missing>()
        for (className in pool.classNames) {
            val owner = objectType(className) ?: continue
            if (concerns(owner) && !classExists(owner)) missing += Missing(name, "class $owner")
        }
        for (ref in pool.memberRefs) {
            val owner = objectType(ref.owner) ?: continue
            for (type in descriptorTypes(ref.descriptor)) {
                if (concerns(type) &&
                    !classExists(type)
                ) {
                    missing += Missing(name, "class $type (in ${ref.owner}.${ref.name}${ref.descriptor})")
                }
            }
            if (concerns(owner) && classExists(owner) && !memberExists(owner, ref)) {
                missing += Missing(name, "${if (ref.field) "field" else "method"} $owner.${ref.name}${ref.descriptor}")
            }
        }
        return missing
    }

    private fun concerns(internalName: String) = packages.any { internalName.startsWith(it) }

    private fun classExists(internalName: String): Boolean = resolved.getOrPut(internalName) {
        try {
            Class.forName(internalName.replace('/', '.'), false, loader)
            true
        } catch (_: ClassNotFoundException) {
            false
        } catch (_: LinkageError) {
            false
        }
    }

    private fun memberExists(owner: String, ref: ConstantPool.MemberRef): Boolean {
        val start = Class.forName(owner.replace('/', '.'), false, loader)
        return hierarchy(start).any { type ->
            if (ref.field) {
                type.declaredFields.any { it.name == ref.name && descriptor(it.type) == ref.descriptor }
            } else if (ref.name == "<init>") {
                type == start && type.declaredConstructors.any { descriptor(it) == ref.descriptor }
            } else {
                type.declaredMethods.any { it.name == ref.name && descriptor(it) == ref.descriptor }
            }
        }
    }

    private fun hierarchy(type: Class<*>): Sequence<Class<*>> = sequence {
        val seen = HashSet<Class<*>>()
        val queue = ArrayDeque(listOf(type))
        while (queue.isNotEmpty()) {
            val next = queue.removeFirst()
            if (!seen.add(next)) continue
            yield(next)
            next.superclass?.let(queue::addLast)
            queue.addAll(next.interfaces)
        }
    }

    companion object {
        /** The class an owner or class constant names: arrays of objects give their element class, arrays of primitives none. */
        private fun objectType(name: String): String? = when {
            !name.startsWith("[") -> name
            else -> name.trimStart('[').takeIf { it.startsWith("L") }?.removePrefix("L")?.removeSuffix(";")
        }

        private fun descriptorTypes(descriptor: String): List<String> =
            Regex("L([^;]+);").findAll(descriptor).map { it.groupValues[1] }.toList()

        fun descriptor(type: Class<*>): String = when {
            type.isArray -> "[" + descriptor(type.componentType)
            type == Void.TYPE -> "V"
            type == java.lang.Boolean.TYPE -> "Z"
            type == java.lang.Byte.TYPE -> "B"
            type == Character.TYPE -> "C"
            type == java.lang.Short.TYPE -> "S"
            type == Integer.TYPE -> "I"
            type == java.lang.Long.TYPE -> "J"
            type == java.lang.Float.TYPE -> "F"
            type == java.lang.Double.TYPE -> "D"
            else -> "L" + type.name.replace('.', '/') + ";"
        }

        private fun descriptor(method: Method) =
            method.parameterTypes.joinToString("", "(", ")") { descriptor(it) } + descriptor(method.returnType)

        private fun descriptor(constructor: Constructor<*>) = constructor.parameterTypes.joinToString("", "(", ")V") { descriptor(it) }
    }
}

/** The parts of a class file's constant pool that name other classes and their members (JVMS 4.4). */
private class ConstantPool(val classNames: List<String>, val memberRefs: List<MemberRef>) {
    data class MemberRef(val owner: String, val name: String, val descriptor: String, val field: Boolean)

    companion object {
        fun read(input: DataInputStream): ConstantPool {
            require(input.readInt() == 0xCAFEBABE.toInt()) { "not a class file" }
            input.readUnsignedShort()
            input.readUnsignedShort()
            val count = input.readUnsignedShort()
            val utf8 = arrayOfNulls<String>(count)
            val classIndex = IntArray(count)
            val nameAndType = arrayOfNulls<IntArray>(count)
            val refs = mutableListOf<IntArray>() // tag, class index, name-and-type index
            var i = 1
            while (i < count) {
                when (val tag = input.readUnsignedByte()) {
                    1 -> utf8[i] = input.readUTF()

                    3, 4 -> input.readInt()

                    5, 6 -> {
                        input.readLong()
                        i++
                    }

                    7 -> classIndex[i] = input.readUnsignedShort()

                    8, 16, 19, 20 -> input.readUnsignedShort()

                    9, 10, 11 -> refs += intArrayOf(tag, input.readUnsignedShort(), input.readUnsignedShort())

                    12 -> nameAndType[i] = intArrayOf(input.readUnsignedShort(), input.readUnsignedShort())

                    15 -> {
                        input.readUnsignedByte()
                        input.readUnsignedShort()
                    }

                    17, 18 -> {
                        input.readUnsignedShort()
                        input.readUnsignedShort()
                    }

                    else -> error("unknown constant pool tag $tag")
                }
                i++
            }
            val classNames = classIndex.filter { it != 0 }.map { utf8[it]!! }
            val memberRefs = refs.map { (tag, cls, nat) ->
                val (name, type) = nameAndType[nat]!!
                MemberRef(utf8[classIndex[cls]]!!, utf8[name]!!, utf8[type]!!, field = tag == 9)
            }
            return ConstantPool(classNames, memberRefs)
        }
    }
}
