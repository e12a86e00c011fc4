package dev.dline.client

/**
 * The typed facade a JetBrains plugin uses: one per project window, over that window's
 * [SidecarSupervisor]. Every call carries the sidecar's bearer token; failures throw
 * [DlineException] with the Connect code.
 *
 * ```
 * val supervisor = SidecarSupervisor(SidecarLaunch(SidecarLocator(bundled).locate()))
 * val dline = DlineClient(supervisor)
 * dline.system.initialize("IntelliJ", version, listOf(projectDir))
 * dline.tasks.subscribe(taskId).collect { event -> render(event) }
 * supervisor.stop() // when the project closes
 * ```
 */
class DlineClient(source: ConnectionSource) {
    val system = SystemApi(source)
    val settings = SettingsApi(source)
    val tasks = TaskApi(source)
    val history = HistoryApi(source)
    val checkpoints = CheckpointApi(source)
    val imports = ImportApi(source)
}
