package dev.dline.client

import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes

/** A supervised real sidecar over fresh [TestRoots], and the facade over it. Close it in a finally/@AfterEach. */
class SidecarHarness(
    val roots: TestRoots = TestRoots(),
    launch: SidecarLaunch = roots.launch(),
    policy: RestartPolicy =
        RestartPolicy(maxRestarts = 3, window = 1.minutes, initialBackoff = 50.milliseconds, maxBackoff = 200.milliseconds),
) : AutoCloseable {
    val supervisor = SidecarSupervisor(launch, policy).also { it.start() }
    val dline = DlineClient(supervisor)

    suspend fun connection() = supervisor.connection()

    override fun close() = supervisor.stop()
}
