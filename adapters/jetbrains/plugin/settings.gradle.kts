// The IntelliJ plugin. Not part of the Maven build CI runs: it needs the IntelliJ Platform SDK,
// which the IntelliJ Platform Gradle Plugin downloads (see ../README.md).
rootProject.name = "dline-intellij"
