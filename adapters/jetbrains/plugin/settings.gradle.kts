// The IntelliJ plugin, built with the Gradle wrapper (./gradlew buildPlugin). It needs JetBrains'
// repositories (the IntelliJ Platform and the IntelliJ Platform Gradle Plugin's dependencies)
// and the client library in ~/.m2 (see ../README.md).
rootProject.name = "dline-intellij"

plugins {
    // Provisions the JDK 21 that jvmToolchain(21) asks for when none is installed.
    id("org.gradle.toolchains.foojay-resolver-convention") version "1.0.0"
}
