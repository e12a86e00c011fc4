/**
 * Several sidecars over the same roots, one task that runs in one of them: what the follow
 * tests share. Each sidecar is a real process of the built binary; the model is the scripted
 * model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { DlineClients } from "../../core/src/client/index.js";
import { CheckpointKind } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { type AskKind, TaskStatus, type Ask, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { RunningSidecar, TestRoots } from "../helpers/sidecar.js";
import type { scopedSidecars } from "../helpers/scoped-sidecars.js";
import type { ModelServerScript } from "../model-server/script.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { nth, type Tuple } from "../helpers/items.js";

export const ENDED = new Set([TaskStatus.COMPLETED, TaskStatus.CANCELLED, TaskStatus.INTERRUPTED, TaskStatus.FAILED]);

/** A task that writes a file (an approval), then completes. */
export function writeThenComplete(): ModelServerScript["turns"] {
  return [
    {
      text: "I will write the file.",
      toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "written by dline\n" } }],
    },
    { text: "Done.", toolCalls: [{ name: "attempt_completion", input: { result: "Wrote notes.txt." } }] },
  ];
}

export interface Windows<Count extends number> {
  roots: TestRoots;
  /** A tuple, so that `const [owner, follower] = sidecars` reads defined sidecars. */
  sidecars: Tuple<RunningSidecar, Count>;
  workspace: string;
  profileId: string;
}

/** `count` sidecars over one set of roots, with the scripted model as a profile all of them see. */
export async function openWindows<Count extends 1 | 2 | 3>(
  scope: ReturnType<typeof scopedSidecars>,
  count: Count,
  turns: ModelServerScript["turns"],
): Promise<Windows<Count>> {
  const roots = scope.testRoots("dline-follow-");
  const sidecars: RunningSidecar[] = [];
  for (let i = 0; i < count; i++) sidecars.push(await scope.sidecar(roots));
  const { server, profileId } = await configureModel(nth(sidecars, 0, "sidecar").clients, "openai", { turns });
  scope.onCleanup(() => server.stop());
  const workspace = makeWorkspace(roots.base);
  return { roots, sidecars: sidecars as Tuple<RunningSidecar, Count>, workspace, profileId };
}

/**
 * A subscriber of one sidecar: every event it receives, in order, until the stream ends or the
 * test stops it. `until` resolves with the first event that matches.
 */
export function watch(clients: DlineClients, taskId: string, afterSeq = 0n) {
  const events: TaskEvent[] = [];
  const controller = new AbortController();
  const waiters: { match: (e: TaskEvent) => boolean; resolve: (e: TaskEvent) => void }[] = [];
  let ended: unknown = undefined;
  const done = (async () => {
    try {
      for await (const res of clients.tasks.subscribe({ taskId, afterSeq }, { signal: controller.signal })) {
        const event = res.event!;
        events.push(event);
        for (const w of [...waiters]) {
          if (w.match(event)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(event);
          }
        }
      }
      ended = "end";
    } catch (err) {
      ended = err;
    }
  })();
  return {
    events,
    /** The first event (seen already or to come) that matches. */
    until(match: (e: TaskEvent) => boolean): Promise<TaskEvent> {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void done.then(() => {
          if (waiters.some((w) => w.resolve === resolve))
            reject(new Error(`the stream ended (${String(ended)}) before the awaited event; saw ${describe(events)}`));
        });
      });
    },
    async ask(kind?: AskKind): Promise<Ask> {
      const event = await this.until(
        (e) => e.event.case === "ask" && (kind === undefined || e.event.value.kind === kind),
      );
      return (event.event as { case: "ask"; value: Ask }).value;
    },
    status(status: TaskStatus): Promise<TaskEvent> {
      return this.until((e) => e.event.case === "statusChanged" && e.event.value.status === status);
    },
    /** The seq of the newest event seen (0 before any). */
    lastSeq(): bigint {
      return events.at(-1)?.seq ?? 0n;
    },
    /** The task completing after `seq` (e.g. the run of a message sent after it). */
    completedAfter(seq: bigint): Promise<TaskEvent> {
      return this.until(
        (e) => e.event.case === "statusChanged" && e.event.value.status === TaskStatus.COMPLETED && e.seq > seq,
      );
    },
    ended(): Promise<TaskEvent> {
      return this.until((e) => e.event.case === "statusChanged" && ENDED.has(e.event.value.status));
    },
    stop(): Promise<void> {
      controller.abort();
      return done;
    },
  };
}

export function describe(events: TaskEvent[]): string {
  return events
    .map(
      (e) =>
        `${e.seq}:${e.event.case}${e.event.case === "statusChanged" ? `(${TaskStatus[e.event.value.status]})` : ""}`,
    )
    .join(" ");
}

/** seq and kind of each event: two subscribers of one task saw the same stream when these are equal. */
export function shape(events: TaskEvent[]): string[] {
  return events.map((e) => `${e.seq}:${e.event.case}`);
}

export function readIn(workspace: string, file: string): string | undefined {
  const p = path.join(workspace, file);
  return fs.existsSync(p) ? fs.readFileSync(p, "utf8") : undefined;
}

/** The ids of the checkpoints a window shows as "restored" (the "before restore" ones aside). */
export async function restoredCheckpoints(clients: DlineClients, taskId: string): Promise<string[]> {
  const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
  return checkpoints.filter((c) => c.restored && c.kind !== CheckpointKind.BEFORE_RESTORE).map((c) => c.id);
}
