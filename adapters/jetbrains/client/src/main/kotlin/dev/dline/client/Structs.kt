package dev.dline.client

import com.google.protobuf.ListValue
import com.google.protobuf.NullValue
import com.google.protobuf.Struct
import com.google.protobuf.Value

/**
 * Settings travel as google.protobuf.Struct. These convert to and from plain Kotlin values:
 * null, Boolean, Number (read back as Double, as JSON has it), String, List and Map<String, *>.
 */
object Structs {
    fun toStruct(map: Map<String, Any?>): Struct =
        Struct.newBuilder().apply { map.forEach { (key, value) -> putFields(key, toValue(value)) } }.build()

    fun toValue(value: Any?): Value = when (value) {
        null -> Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build()

        is Value -> value

        is Boolean -> Value.newBuilder().setBoolValue(value).build()

        is Number -> Value.newBuilder().setNumberValue(value.toDouble()).build()

        is String -> Value.newBuilder().setStringValue(value).build()

        is Map<*, *> -> Value.newBuilder().setStructValue(
            toStruct(value.entries.associate { (k, v) -> requireNotNull(k as? String) { "settings keys are strings, got $k" } to v }),
        ).build()

        is Iterable<*> -> Value.newBuilder().setListValue(ListValue.newBuilder().addAllValues(value.map(::toValue))).build()

        else -> throw IllegalArgumentException("${value::class.simpleName} cannot be a setting value")
    }

    fun toMap(struct: Struct): Map<String, Any?> = struct.fieldsMap.mapValues { (_, value) -> fromValue(value) }

    fun fromValue(value: Value): Any? = when (value.kindCase) {
        Value.KindCase.BOOL_VALUE -> value.boolValue
        Value.KindCase.NUMBER_VALUE -> value.numberValue
        Value.KindCase.STRING_VALUE -> value.stringValue
        Value.KindCase.STRUCT_VALUE -> toMap(value.structValue)
        Value.KindCase.LIST_VALUE -> value.listValue.valuesList.map(::fromValue)
        else -> null
    }
}
