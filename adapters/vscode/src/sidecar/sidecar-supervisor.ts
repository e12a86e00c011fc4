import * as fs from "node:fs";
import * as path from "node:path";
import {
  createDlineClients,
  spawnSidecar,
  type DlineClients,
  type Handshake,
  type SidecarProcess,
} from "../../../../core/src/client/index.js";
import type { InitializeResponse } from "../../../../core/src/gen/dline/v1/system_pb.js";
import { LogTail } from "./log-tail.js";
import type { Log } from "./log.js";
import { RestartPolicy } from "./restart-policy.js";

/** One running sidecar: its clients stay valid until it exits. */
export interface RunningCore {
  clients: DlineClients;
  handshake: Handshake;
  init: InitializeResponse;
  /** Increases with every start, so that listeners can tell a restart from the first start. */
  generation: number;
}

export interface SupervisorOptions {
  /** Finds the binary; called on every start, so a changed setting takes effect on restart. */
  locateBinary: () => string;
  /** The workspace folder (the sidecar's working directory), or undefined with none open. */
  workspaceRoots: string[];
  env: NodeJS.ProcessEnv;
  clientVersion: string;
  /** Folder for the sidecar's stderr file. */
  logDir: string;
  log: Log;
  policy?: RestartPolicy;
  handshakeTimeoutMs?: number;
}

type Listener<T> = (value: T) => void;

/**
 * Starts dline-core as a child process, reads its handshake, calls Initialize, and keeps it
 * running: an unexpected exit is followed by a restart after the policy's backoff. stop() closes
 * its stdin (the sidecar flushes and exits) and kills it if it does not go in time.
 */
export class SidecarSupervisor {
  private process: SidecarProcess | undefined;
  private running: RunningCore | undefined;
  private generation = 0;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | undefined;
  private waiters: { resolve: (core: RunningCore) => void; reject: (err: Error) => void }[] = [];
  private readonly startListeners = new Set<Listener<RunningCore>>();
  private readonly exitListeners = new Set<Listener<{ generation: number; code: number | string }>>();
  private readonly failListeners = new Set<Listener<Error>>();
  private readonly startFailureListeners = new Set<Listener<Error>>();
  private runningWaiters: ((core: RunningCore) => void)[] = [];
  private readonly policy: RestartPolicy;
  private tail: LogTail | undefined;
  /** Set when the policy gave up; ready() rejects with it until a manual restart. */
  private failure: Error | undefined;

  constructor(private readonly options: SupervisorOptions) {
    this.policy = options.policy ?? new RestartPolicy();
  }

  get current(): RunningCore | undefined {
    return this.running;
  }

  get pid(): number | undefined {
    return this.running?.handshake.pid;
  }

  onDidStart(listener: Listener<RunningCore>): { dispose(): void } {
    this.startListeners.add(listener);
    return { dispose: () => this.startListeners.delete(listener) };
  }

  onDidExit(listener: Listener<{ generation: number; code: number | string }>): { dispose(): void } {
    this.exitListeners.add(listener);
    return { dispose: () => this.exitListeners.delete(listener) };
  }

  /** The policy gave up restarting (until a restart the person asks for). */
  onDidFail(listener: Listener<Error>): { dispose(): void } {
    this.failListeners.add(listener);
    return { dispose: () => this.failListeners.delete(listener) };
  }

  /**
   * A start failed (binary missing or not runnable, no handshake, Initialize refused): told at
   * once, at every failed attempt, while restarts go on by the policy.
   */
  onDidFailToStart(listener: Listener<Error>): { dispose(): void } {
    this.startFailureListeners.add(listener);
    return { dispose: () => this.startFailureListeners.delete(listener) };
  }

  /**
   * The running sidecar, however long that takes: unlike ready() it neither starts one nor
   * fails while the core cannot start, so a stream that follows the core waits quietly for it
   * to come back (after a fix and a restart) instead of retrying and logging in a loop.
   */
  whenRunning(): Promise<RunningCore> {
    if (this.running) return Promise.resolve(this.running);
    return new Promise((resolve) => this.runningWaiters.push(resolve));
  }

  /** The running sidecar, waiting for a start or restart in progress. */
  ready(): Promise<RunningCore> {
    if (this.running) return Promise.resolve(this.running);
    if (this.stopped) return Promise.reject(new Error("The Dline core is stopped."));
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (!this.starting && !this.restartTimer) void this.start();
    });
  }

  start(): Promise<void> {
    this.starting ??= this.startOnce().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** A restart the user asked for: stop the current process, reset the backoff, start again. */
  async restart(): Promise<RunningCore> {
    this.policy.reset();
    this.failure = undefined;
    const proc = this.process;
    if (proc) {
      this.process = undefined;
      this.running = undefined;
      await stopProcess(proc);
    }
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.start();
    return this.ready();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.starting?.catch(() => {});
    const proc = this.process;
    this.process = undefined;
    this.running = undefined;
    if (proc) await stopProcess(proc);
    this.tail?.stop();
    this.rejectWaiters(new Error("The Dline core is stopped."));
  }

  private async startOnce(): Promise<void> {
    if (this.stopped || this.running) return;
    const { log } = this.options;
    const startedAt = Date.now();
    let proc: SidecarProcess | undefined;
    try {
      const binary = this.options.locateBinary();
      fs.mkdirSync(this.options.logDir, { recursive: true });
      const stderrFile = path.join(this.options.logDir, "dline-core.stderr.log");
      this.tail?.stop();
      this.tail = new LogTail(stderrFile, (line) => log.info(`[core] ${line}`));
      this.tail.start();
      log.info(`starting ${binary}`);
      proc = await spawnSidecar({
        binary,
        cwd: this.options.workspaceRoots[0],
        env: this.options.env,
        stderr: stderrFile,
        handshakeTimeoutMs: this.options.handshakeTimeoutMs,
      });
      if (this.stopped) {
        await stopProcess(proc);
        return;
      }
      const clients = createDlineClients(proc.handshake.url, proc.handshake.token);
      const init = await clients.system.initialize({
        clientName: "vscode",
        clientVersion: this.options.clientVersion,
        workspaceRoots: this.options.workspaceRoots,
      });
      this.process = proc;
      const core: RunningCore = { clients, handshake: proc.handshake, init, generation: ++this.generation };
      this.running = core;
      log.info(
        `core ${init.serverVersion} ready (pid ${proc.handshake.pid}, protocol ${init.protocolVersion}, generation ${core.generation})`,
      );
      const started = proc;
      void proc.exited.then((code) => this.onExit(started, core, code, startedAt));
      for (const waiter of this.waiters.splice(0)) waiter.resolve(core);
      for (const resolve of this.runningWaiters.splice(0)) resolve(core);
      for (const listener of this.startListeners) safely(log, () => listener(core));
    } catch (err) {
      log.error(`the core did not start: ${(err as Error).message}`);
      if (proc && this.process !== proc) await stopProcess(proc).catch(() => {});
      for (const listener of this.startFailureListeners) safely(log, () => listener(err as Error));
      this.scheduleRestart(this.policy.onStartFailure(), err as Error);
    }
  }

  private onExit(proc: SidecarProcess, core: RunningCore, code: number | string, startedAt: number): void {
    const { log } = this.options;
    for (const listener of this.exitListeners) safely(log, () => listener({ generation: core.generation, code }));
    if (this.process !== proc) return; // stopped or replaced on purpose
    this.process = undefined;
    this.running = undefined;
    if (this.stopped) return;
    log.warn(`the core (pid ${core.handshake.pid}) exited unexpectedly (${code})`);
    this.scheduleRestart(this.policy.onExit(Date.now() - startedAt), new Error(`The Dline core exited (${code}).`));
  }

  private scheduleRestart(decision: ReturnType<RestartPolicy["onExit"]>, cause: Error): void {
    const { log } = this.options;
    if (this.stopped) return;
    if (!decision.restart) {
      this.failure = new Error(
        `The Dline core failed ${decision.attempt} times in a row; last error: ${cause.message}`,
      );
      log.error(`${this.failure.message}. Use "Dline: Restart Core" to try again.`);
      this.rejectWaiters(this.failure);
      const failure = this.failure;
      for (const listener of this.failListeners) safely(log, () => listener(failure));
      return;
    }
    log.info(`restarting the core in ${decision.delayMs} ms (attempt ${decision.attempt})`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.start();
    }, decision.delayMs);
  }

  private rejectWaiters(err: Error): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }
}

/** Closes stdin (the sidecar flushes and exits); SIGKILL if it is still there after 5 s. */
async function stopProcess(proc: SidecarProcess): Promise<void> {
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), 5_000);
  try {
    await proc.stop();
  } finally {
    clearTimeout(timer);
  }
}

function safely(log: Log, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.error(`listener failed: ${(err as Error).message}`);
  }
}
