package dev.dline.client

import com.connectrpc.Code
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.future.await
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.runInterruptible
import kotlinx.coroutines.withTimeoutOrNull
import okhttp3.OkHttpClient
import java.util.logging.Level
import java.util.logging.Logger
import kotlin.time.Duration

/**
 * Keeps one sidecar running for one project window: starts it on first use, restarts it with
 * backoff when it dies (as [policy] allows), and stops it by closing its stdin. Its [state]
 * drives the UI; the facade asks it for the live [SidecarConnection].
 *
 * [launchOf] is asked for the launch at every start, so finding the binary is part of starting:
 * a missing binary becomes [SidecarState.Failed] with the reason (not an exception where the
 * supervisor is created), and a restart finds a binary installed since. Creating a supervisor
 * starts nothing; neither does [stop] on one that never started.
 */
class SidecarSupervisor @JvmOverloads constructor(
    private val launchOf: () -> SidecarLaunch,
    private val policy: RestartPolicy = RestartPolicy(),
    private val options: ClientOptions = ClientOptions(),
    /** The HTTP client to build on; by default one of its own, whose threads [stop] ends. */
    baseHttp: OkHttpClient? = null,
) : ConnectionSource,
    AutoCloseable {
    @JvmOverloads constructor(
        launch: SidecarLaunch,
        policy: RestartPolicy = RestartPolicy(),
        options: ClientOptions = ClientOptions(),
        baseHttp: OkHttpClient? = null,
    ) : this({ launch }, policy, options, baseHttp)

    private val http: OkHttpClient = baseHttp ?: ClientOptions.baseHttpClient()
    private val ownsHttp = baseHttp == null

    private val log = Logger.getLogger(SidecarSupervisor::class.java.name)
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO)
    private val tracker = RestartPolicy.Tracker(policy)
    private val _state = MutableStateFlow<SidecarState>(SidecarState.NotStarted)
    private var loop: Job? = null
    private var generation = 0

    @Volatile private var stopping = false

    @Volatile private var current: SidecarConnection? = null

    /**
     * The generation [restart] asked to replace, or one asked to shut down ([exitRequested]): its
     * exit is a restart, not a death to count against the policy.
     */
    @Volatile private var replacing = 0

    val state: StateFlow<SidecarState> = _state.asStateFlow()

    /** Starts the sidecar (again, after [SidecarState.Failed]); does nothing while one runs. */
    @Synchronized
    fun start() {
        if (loop?.isActive == true) return
        check(!stopping) { "This supervisor was stopped; create a new one." }
        tracker.reset()
        loop = scope.launch { supervise() }
    }

    /**
     * What "Restart Dline Core" does: a running sidecar is stopped by closing its stdin (so it
     * flushes) and a fresh one started, without counting as a crash; after [SidecarState.Failed]
     * or before any start, it starts one. While one is starting or restarting, it does nothing
     * more. Blocking while the old sidecar exits; call it off the UI thread.
     */
    fun restart() {
        val running = synchronized(this) {
            check(!stopping) { "This supervisor was stopped; create a new one." }
            val ready = _state.value as? SidecarState.Ready
            if (loop?.isActive != true) {
                start()
                return
            }
            if (ready == null) return
            replacing = ready.connection.generation
            ready.connection
        }
        running.process.stop()
    }

    private suspend fun supervise() {
        while (scope.isActive && !stopping) {
            _state.value = SidecarState.Starting(generation + 1)
            val why = try {
                val process = runInterruptible { SidecarProcess.start(launchOf()) }
                val connection = SidecarConnection(++generation, process, http, options)
                current = connection
                if (stopping) process.stop()
                _state.value = SidecarState.Ready(connection)
                log.info("dline sidecar ready: $connection")
                val code = process.exited.await()
                if (stopping) break
                if (replacing == connection.generation) {
                    log.info("dline sidecar (pid ${process.pid}) stopped for a restart")
                    tracker.reset()
                    continue
                }
                "The sidecar (pid ${process.pid}) exited with code $code."
            } catch (e: CancellationException) {
                throw e
            } catch (e: SidecarStartException) {
                if (e.permanent) {
                    // Missing, not executable, another protocol: the same start would fail again.
                    log.log(Level.WARNING, e.message)
                    _state.value = SidecarState.Failed(e.message ?: "The sidecar cannot start.")
                    return
                }
                e.message ?: "The sidecar could not start."
            } catch (e: Exception) {
                // E.g. an unwritable log folder: a failed start, which may succeed later.
                e.message ?: "The sidecar could not start (${e.javaClass.simpleName})."
            }
            log.log(Level.WARNING, why)
            when (val decision = tracker.onDeath()) {
                is RestartPolicy.Decision.Restart -> {
                    _state.value = SidecarState.Restarting(decision.attempt, decision.delay, why)
                    delay(decision.delay)
                }

                is RestartPolicy.Decision.GiveUp -> {
                    _state.value = SidecarState.Failed("$why ${decision.reason}")
                    return
                }
            }
        }
        _state.value = SidecarState.Stopped
    }

    override suspend fun connection(): SidecarConnection {
        if (_state.value == SidecarState.NotStarted) start()
        // A Ready whose process already died is stale: the supervisor is about to notice; wait for what follows.
        val settled = _state.first {
            (it is SidecarState.Ready && it.connection.process.isAlive) || it is SidecarState.Failed || it is SidecarState.Stopped
        }
        return when (val state = settled) {
            is SidecarState.Ready -> state.connection
            is SidecarState.Failed -> throw DlineException(Code.UNAVAILABLE, state.reason)
            else -> throw DlineException(Code.UNAVAILABLE, "The Dline sidecar was stopped.")
        }
    }

    override fun exitRequested(connection: SidecarConnection) {
        replacing = connection.generation
    }

    override suspend fun diedWithin(connection: SidecarConnection, grace: Duration): Boolean =
        withTimeoutOrNull(grace) { connection.process.exited.await() } != null

    /**
     * Stops for good (the project closes): closes the sidecar's stdin so it flushes and exits,
     * and waits for that. Starts nothing when none was started. Blocking; call it off the UI thread.
     */
    fun stop() {
        stopping = true
        current?.process?.stop()
        runBlocking { loop?.cancelAndJoin() }
        scope.cancel()
        // OkHttp's dispatcher threads are not daemons and idle for a minute: a program of its own
        // would outlive its stop() by that much. A client given by the caller is the caller's.
        if (ownsHttp) {
            http.dispatcher.executorService.shutdown()
            http.connectionPool.evictAll()
        }
        _state.value = SidecarState.Stopped
    }

    override fun close() = stop()
}
