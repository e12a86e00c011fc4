package dev.dline.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path

/**
 * The plugin runs the client on the Kotlin libraries of the IDE (it bundles none of its own):
 * these tests hold the suite to exactly the versions the lowest supported IDE bundles, and check
 * that nothing the plugin bundles refers to stdlib, reflect or coroutines API those versions lack.
 */
class IdeRuntimeTest {
    private val loader = javaClass.classLoader

    /** The one jar on the test classpath that holds [resource], by file name. */
    private fun jarOf(resource: String): String {
        val copies = loader.getResources(resource).toList()
        assertEquals(1, copies.size, "exactly one copy of $resource on the classpath: $copies")
        return copies.single().path.substringBefore("!/").substringAfterLast('/')
    }

    @Test
    fun `the suite runs on the stdlib, reflect and coroutines of the lowest supported IDE`() {
        val kotlin = System.getProperty("dline.ide.kotlin")
        val coroutines = System.getProperty("dline.ide.coroutines")
        assertEquals("kotlin-stdlib-$kotlin.jar", jarOf("kotlin/Unit.class"))
        assertEquals(kotlin, KotlinVersion.CURRENT.toString())
        assertEquals("kotlin-reflect-$kotlin.jar", jarOf("kotlin/reflect/full/KClasses.class"))
        assertEquals("kotlinx-coroutines-core-jvm-$coroutines.jar", jarOf("kotlinx/coroutines/Job.class"))
    }

    @Test
    fun `nothing the plugin bundles refers to Kotlin API the IDE's versions lack`() {
        val bundled = Files.readString(Path.of(System.getProperty("dline.bundledClasspath"))).trim()
            .split(java.io.File.pathSeparator).filter { it.isNotEmpty() }.map { Path.of(it) }
        val roots = listOf(Path.of(System.getProperty("dline.client.classes"))) + bundled
        val missing = LinkageScan(loader, listOf("kotlin/", "kotlinx/coroutines/")).scan(roots)
        assertEquals(emptyList<LinkageScan.Missing>(), missing, "references the IDE's Kotlin libraries cannot satisfy")
    }
}
