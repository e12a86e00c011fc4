/**
 * The scenarios the chat-fold fixtures are recorded from, each played through the real
 * sidecar and the scripted model server as a client would follow it: every event of the task
 * from its first, in order, and at the end the task as GetTask shows it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { CheckpointKind, RestoreMode } from "../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus, type GetTaskResponse, type TaskEvent } from "../../../core/src/gen/dline/v1/task_pb.js";
import type { ScriptTurn } from "../../model-server/script.js";
import { startSidecar, type RunningSidecar } from "../../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "../../runtime/harness.js";
import { lastOf } from "../../helpers/items.js";

export interface Recording {
  events: TaskEvent[];
  task: GetTaskResponse;
}

export interface Scenario {
  name: string;
  about: string;
  play(cleanups: (() => Promise<unknown>)[]): Promise<Recording>;
}

const ended = (s: TaskStatus) =>
  s === TaskStatus.COMPLETED || s === TaskStatus.FAILED || s === TaskStatus.CANCELLED || s === TaskStatus.INTERRUPTED;

/** The task's events after `seen` up to the baseline's checkpointSaved (none when `seen` has it). */
async function eventsUntilBaseline(sidecar: RunningSidecar, taskId: string, seen: TaskEvent[]): Promise<TaskEvent[]> {
  const isBaseline = (e: TaskEvent) =>
    e.event.case === "checkpointSaved" && e.event.value.kind === "CHECKPOINT_KIND_BASELINE";
  if (seen.some(isBaseline)) return [];
  const events: TaskEvent[] = [];
  const afterSeq = lastOf(seen, "event seen").seq;
  for await (const res of sidecar.clients.tasks.subscribe(
    { taskId, afterSeq },
    { signal: AbortSignal.timeout(45_000) },
  )) {
    events.push(res.event!);
    if (isBaseline(res.event!)) break;
  }
  return events;
}

async function setup(
  cleanups: (() => Promise<unknown>)[],
  turns: ScriptTurn[],
  options: { files?: Record<string, string>; window?: number } = {},
) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const script = options.window ? { turns, contextWindow: options.window, responders: [SUMMARY_RESPONDER] } : { turns };
  const profile = options.window ? { contextWindow: BigInt(options.window) } : {};
  const { server, profileId } = await configureModel(sidecar.clients, "anthropic", script, profile);
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base, options.files ?? {});
  return { sidecar, profileId, workspace };
}

const SUMMARY_RESPONDER = {
  systemIncludes: "faithful, compact summaries",
  turn: { text: "SUMMARY: the person asked to read the notes; they were read." },
};

/** Runs a task to its end, answering asks with `answer`; returns its events and GetTask. */
async function run(
  sidecar: RunningSidecar,
  profileId: string,
  workspace: string,
  text: string,
  answer?: (askId: string, kind: string) => { approve: boolean; text: string },
) {
  const { clients } = sidecar;
  const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text, profileId });
  const events = await followUntilDone(clients, taskId, async (e) => {
    if (e.event.case !== "ask" || !answer) return;
    const reply = answer(e.event.value.askId, e.event.value.tool);
    await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: reply.approve, text: reply.text });
  });
  return { taskId, events };
}

const approveAll = () => ({ approve: true, text: "" });

/** The task's events after `after`, up to the last one GetTask knows of (nothing is running). */
async function eventsUpTo(sidecar: RunningSidecar, taskId: string, after: bigint): Promise<TaskEvent[]> {
  const { lastSeq } = await sidecar.clients.tasks.getTask({ taskId });
  const events: TaskEvent[] = [];
  if (lastSeq <= after) return events;
  for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: after })) {
    events.push(res.event!);
    if (res.event!.seq >= lastSeq) break;
  }
  return events;
}

export const scenarios: Scenario[] = [
  {
    name: "streaming",
    about: "A streamed answer: reasoning and text in many small deltas, usage, then the model ends its turn.",
    async play(cleanups) {
      const { sidecar, profileId, workspace } = await setup(cleanups, [
        {
          reasoning: "The person wants a greeting; a short one will do.",
          text: "Hello! This answer streams in small pieces,\nover two lines.",
          textChunkChars: 4,
          usage: { input: 120, output: 30 },
        },
      ]);
      const { taskId, events } = await run(sidecar, profileId, workspace, "Say hello");
      return { events, task: await sidecar.clients.tasks.getTask({ taskId }) };
    },
  },
  {
    name: "approvals-with-edits",
    about:
      "Edits and a command, each proposed with its exact change or command line, approved, run, and the task completed.",
    async play(cleanups) {
      const { sidecar, profileId, workspace } = await setup(
        cleanups,
        [
          {
            text: "I will update the greeting and add notes.",
            toolCalls: [
              {
                name: "replace_in_file",
                input: { path: "hello.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
              },
              { name: "write_to_file", input: { path: "notes.md", content: "# Notes\n" } },
            ],
          },
          { toolCalls: [{ name: "execute_command", input: { command: "cat hello.txt", requires_approval: true } }] },
          {
            text: "Done.",
            toolCalls: [{ name: "attempt_completion", input: { result: "Greeting updated, notes added." } }],
          },
        ],
        { files: { "hello.txt": "hello\n" } },
      );
      const { taskId, events } = await run(sidecar, profileId, workspace, "Greet the world", approveAll);
      return { events, task: await sidecar.clients.tasks.getTask({ taskId }) };
    },
  },
  {
    name: "denial-with-feedback",
    about: "An edit denied with feedback: the row says denied, the feedback shows, the model answers it.",
    async play(cleanups) {
      const { sidecar, profileId, workspace } = await setup(
        cleanups,
        [
          { toolCalls: [{ name: "write_to_file", input: { path: "hello.txt", content: "overwritten\n" } }] },
          { text: "Understood: hello.txt stays; I will suggest the change instead." },
        ],
        { files: { "hello.txt": "hello\n" } },
      );
      const { taskId, events } = await run(sidecar, profileId, workspace, "Rewrite hello.txt", () => ({
        approve: false,
        text: "keep hello.txt as it is",
      }));
      return { events, task: await sidecar.clients.tasks.getTask({ taskId }) };
    },
  },
  {
    name: "restore-with-rewind",
    about:
      "A task that edits and completes, then Restore Files & Task to its first turn's checkpoint: the conversation is cut back (rewound).",
    async play(cleanups) {
      const { sidecar, profileId, workspace } = await setup(cleanups, [
        { text: "Writing one.", toolCalls: [{ name: "write_to_file", input: { path: "one.txt", content: "1\n" } }] },
        { text: "Writing two.", toolCalls: [{ name: "write_to_file", input: { path: "two.txt", content: "2\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Both written." } }] },
      ]);
      await setAutoApproval(sidecar.clients, { editFiles: true });
      const { clients } = sidecar;
      const { taskId, events } = await run(sidecar, profileId, workspace, "Write two files");
      const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
      const firstTurn = checkpoints.find((c) => c.kind === CheckpointKind.TURN)!;
      const after = lastOf(events, "event").seq;
      await clients.checkpoints.restore({ taskId, checkpointId: firstTurn.id, mode: RestoreMode.FILES_AND_TASK });
      const restored = await eventsUpTo(sidecar, taskId, after);
      if (fs.existsSync(path.join(workspace, "two.txt"))) throw new Error("the restore left two.txt");
      return { events: [...events, ...restored], task: await clients.tasks.getTask({ taskId }) };
    },
  },
  {
    name: "sidecar-restart-interrupted",
    about:
      "The sidecar dies while an edit waits for approval; the client follows the task again in a new sidecar: the call is interrupted, the ask dropped, the task INTERRUPTED.",
    async play(cleanups) {
      const a = await startSidecar();
      const { server, profileId } = await configureModel(a.clients, "anthropic", {
        turns: [
          {
            text: "Proposing an edit.",
            toolCalls: [{ name: "write_to_file", input: { path: "pending.txt", content: "never\n" } }],
          },
        ],
      });
      cleanups.push(() => server.stop());
      const workspace = makeWorkspace(a.roots.base);
      const { taskId } = await a.clients.tasks.newTask({
        workspaceRoot: workspace,
        text: "Write pending.txt",
        profileId,
      });
      const waiting = await followUntilDone(a.clients, taskId, undefined, 0n, (s) => s === TaskStatus.WAITING);
      // Killed once the baseline was told too (it is saved while the approval is asked).
      const before = [...waiting, ...(await eventsUntilBaseline(a, taskId, waiting))];
      a.process.child.kill("SIGKILL");
      await a.process.exited;
      const b = await startSidecar({ roots: a.roots });
      cleanups.push(() => b.stop());
      const after = await followUntilDone(
        b.clients,
        taskId,
        undefined,
        lastOf(before, "event before the kill").seq,
        ended,
      );
      return { events: [...before, ...after], task: await b.clients.tasks.getTask({ taskId }) };
    },
  },
  {
    name: "compaction",
    about:
      "Reads that fill a small context window: older turns are summarized (a compaction row with its checkpoint), the task completes.",
    async play(cleanups) {
      const files: Record<string, string> = {};
      const turns: ScriptTurn[] = [];
      for (const name of ["one", "two", "three", "four"]) {
        files[`${name}.md`] =
          Array.from({ length: 160 }, (_, i) => `${name} note ${i}: ${"lorem ipsum dolor sit amet ".repeat(3)}`).join(
            "\n",
          ) + "\n";
        turns.push({ toolCalls: [{ name: "read_file", input: { path: `${name}.md` } }] });
      }
      turns.push({ toolCalls: [{ name: "attempt_completion", input: { result: "Read all the notes." } }] });
      const { sidecar, profileId, workspace } = await setup(cleanups, turns, { files, window: 12_000 });
      await setAutoApproval(sidecar.clients, { readFiles: true });
      const { taskId, events } = await run(sidecar, profileId, workspace, "Read the notes");
      return { events, task: await sidecar.clients.tasks.getTask({ taskId }) };
    },
  },
];
