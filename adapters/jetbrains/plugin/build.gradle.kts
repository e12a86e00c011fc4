import org.jetbrains.kotlin.gradle.dsl.KotlinVersion

// Built by a developer who can reach JetBrains' repositories:
//   (cd .. && mvn -B install -DskipTests -pl client -am)   # the client library, into ~/.m2
//   ./gradlew buildPlugin                                   # build/distributions/dline-intellij-0.1.0.zip
//
// The lowest supported IDE is IntelliJ Platform 2024.3 (build 243). It bundles Kotlin stdlib and
// kotlin-reflect 2.0.21 and kotlinx-coroutines 1.8.0-intellij-11, and the plugin runs on those:
// API and language version 2.0, and none of them bundled. Compiler, IntelliJ Platform Gradle
// Plugin, Gradle and platform versions are the ones JetBrains' IntelliJ Platform Plugin Template
// used for since-build 243. ../client is built with the same compiler for the same versions;
// test/jetbrains checks that the two agree and runs the client's tests on those libraries.
plugins {
    id("org.jetbrains.kotlin.jvm") version "2.1.20"
    id("org.jetbrains.intellij.platform") version "2.6.0"
}

group = "dev.dline"
version = "0.1.0"

kotlin {
    jvmToolchain(21)
    compilerOptions {
        apiVersion.set(KotlinVersion.KOTLIN_2_0)
        languageVersion.set(KotlinVersion.KOTLIN_2_0)
    }
}

repositories {
    mavenLocal() // dev.dline:dline-jetbrains-client, from `mvn install` in ..
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

dependencies {
    intellijPlatform {
        intellijIdeaCommunity("2024.3.6")
    }
    implementation("dev.dline:dline-jetbrains-client:0.1.0") {
        // The IDE provides kotlin-stdlib and kotlin-reflect (2.0.21 in 2024.3; its class loader
        // loads kotlin.reflect classes for plugins itself) and kotlinx-coroutines, which plugins
        // must never bundle. The client is built and tested against exactly those versions.
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

// The sidecar ships inside the plugin, one binary per platform: <plugin>/bin/<os>-<arch>/dline-core
// (SidecarLocator picks the one for the machine the IDE runs on). dist/dline-core is this machine's
// build; dist/dline-core-<os>-<arch> are cross-builds (node scripts/build-sidecar.mjs --platform ...).
val dist = layout.projectDirectory.dir("../../../dist")
val hostPlatform = run {
    val os = System.getProperty("os.name").lowercase()
    val arch = System.getProperty("os.arch").lowercase()
    val osName = when {
        os.startsWith("linux") -> "linux"
        os.startsWith("mac") || os.startsWith("darwin") -> "darwin"
        os.startsWith("windows") -> "win32"
        else -> os
    }
    val archName = when (arch) {
        "amd64", "x86_64" -> "x64"
        "aarch64", "arm64" -> "arm64"
        else -> arch
    }
    "$osName-$archName"
}

tasks.prepareSandbox {
    val pluginDir = intellijPlatform.projectName
    from(dist.file("dline-core")) {
        into(pluginDir.map { "$it/bin/$hostPlatform" })
        filePermissions { unix("rwxr-xr-x") }
    }
    from(dist) {
        include("dline-core-*")
        eachFile {
            val platform = name.removePrefix("dline-core-").removeSuffix(".exe")
            path = "${pluginDir.get()}/bin/$platform/dline-core" + (if (name.endsWith(".exe")) ".exe" else "")
        }
        filePermissions { unix("rwxr-xr-x") }
    }
    doFirst {
        check(dist.file("dline-core").asFile.canExecute()) {
            "Build the sidecar first: node scripts/build-sidecar.mjs at the repository root."
        }
    }
}
