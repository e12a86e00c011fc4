// Built by a developer who has network access to JetBrains' repositories:
//   (cd ../client && mvn -B install -DskipTests)   # the client library, into ~/.m2
//   gradle buildPlugin                               # build/distributions/dline-intellij-0.1.0.zip
// Versions pinned; IntelliJ 2024.3 needs a JDK 21 to build against.
plugins {
    id("org.jetbrains.kotlin.jvm") version "2.1.20"
    id("org.jetbrains.intellij.platform") version "2.5.0"
}

group = "dev.dline"
version = "0.1.0"

kotlin {
    jvmToolchain(21)
}

repositories {
    mavenLocal() // dev.dline:dline-jetbrains-client, from `mvn install` in ../client
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

dependencies {
    intellijPlatform {
        intellijIdeaCommunity("2024.3.5")
    }
    implementation("dev.dline:dline-jetbrains-client:0.1.0") {
        // The IDE ships Kotlin and kotlinx-coroutines: a plugin must not bundle its own copies.
        exclude(group = "org.jetbrains.kotlin")
        exclude(group = "org.jetbrains.kotlinx")
    }
}

intellijPlatform {
    pluginConfiguration {
        ideaVersion {
            sinceBuild = "243"
        }
    }
}

// The sidecar binary ships inside the plugin: <plugin>/bin/dline-core (DlineProjectService finds it there).
val sidecarBinary = layout.projectDirectory.file("../../../dist/dline-core")

tasks.prepareSandbox {
    from(sidecarBinary) {
        into(intellijPlatform.projectName.map { "$it/bin" })
        filePermissions { unix("rwxr-xr-x") }
    }
    doFirst {
        check(sidecarBinary.asFile.canExecute()) { "Build the sidecar first: node scripts/build-sidecar.mjs at the repository root." }
    }
}
