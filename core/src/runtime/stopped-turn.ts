/**
 * A turn whose tool calls did not all end: its run stopped (the sidecar died or stopped, an
 * editor reloaded) while one call waited for approval or ran. The journal records each call's
 * progress as it goes (`tool_call_progress` entries, replaced by the turn's `tool_results` when
 * the turn ends), so that when the task goes on:
 *  - each call that ended keeps its real result (a file written stays "written");
 *  - a call that was running gets "interrupted" (it may have done part of its work);
 *  - a call that waited for its approval never ran: Resume asks it again, and runs the calls
 *    after it as the turn would have, without a new model request.
 * A call with no progress recorded (a task of an earlier version, an imported one) counts as
 * interrupted: nothing says it had not started.
 */
import type { ModelToolCall } from "./assistant-stream.js";
import { LEGACY_CONVERSATION_KIND } from "../tasks/index.js";
import { JOURNAL_KIND, unansweredToolCalls, type JournalEntryLike, type ToolResultsData } from "./conversation.js";

export const TOOL_CALL_PROGRESS = "tool_call_progress";

/** One step of a call: asked (its approval awaited), started (approved or auto-approved), ended. */
export interface ToolCallProgress {
  toolUseId: string;
  step: "asked" | "started" | "ended";
  /** ended: the result the model reads. */
  content?: string;
  isError?: boolean;
  /** started: words the person approved it with (the turn's feedback). */
  feedback?: string;
}

type ToolResult = ToolResultsData["results"][number];

export const INTERRUPTED_CALL_RESULT =
  "This tool call was interrupted (the task stopped before it finished). Check the workspace before repeating it.";
export const NOT_RUN_AFTER_INTERRUPTION =
  "Not run: the task stopped at an earlier tool call of this turn, before this one.";
export const NOT_RUN_BEFORE_MESSAGE =
  "Not run: the task stopped while this call waited for approval, and the user wrote a new message instead.";

/** A call's row when the run stopped while its approval was awaited. */
export const STOPPED_WHILE_ASKING =
  "The sidecar stopped while this call waited for approval: nothing ran. Resume asks again.";

export interface StoppedTurn {
  /** The journal seq of the turn's assistant message: its calls' progress entries come after it. */
  afterSeq: number;
  /** Results of the calls settled so far, in call order. */
  results: ToolResult[];
  /** Calls that never started, from one whose approval was awaited on: Resume runs them. */
  notStarted: ModelToolCall[];
  /** Words the person approved calls of this turn with. */
  feedback?: string;
}

/** The stopped turn at the end of the journal; undefined when the last message has no unanswered call. */
export function stoppedTurn(entries: JournalEntryLike[]): StoppedTurn | undefined {
  const calls = unansweredToolCalls(entries);
  if (calls.length === 0) return undefined;
  const afterSeq = entries.findLast(
    (e) => e.kind === JOURNAL_KIND.assistant || e.kind === LEGACY_CONVERSATION_KIND,
  )!.seq;
  const progress = new Map<string, ToolCallProgress[]>();
  for (const e of entries) {
    if (e.kind !== TOOL_CALL_PROGRESS || e.seq < afterSeq) continue;
    const p = JSON.parse(e.data) as ToolCallProgress;
    progress.set(p.toolUseId, [...(progress.get(p.toolUseId) ?? []), p]);
  }
  const results: ToolResult[] = [];
  const notStarted: ModelToolCall[] = [];
  const feedback: string[] = [];
  let interrupted = false;
  for (const call of calls) {
    const steps = progress.get(call.id) ?? [];
    const ended = steps.find((s) => s.step === "ended");
    const started = steps.find((s) => s.step === "started");
    if (started?.feedback) feedback.push(started.feedback);
    if (ended) results.push({ toolUseId: call.id, content: ended.content ?? "", isError: ended.isError });
    else if (notStarted.length > 0) notStarted.push(call);
    else if (interrupted) results.push({ toolUseId: call.id, content: NOT_RUN_AFTER_INTERRUPTION, isError: true });
    else if (!started && steps.some((s) => s.step === "asked")) notStarted.push(call);
    else {
      interrupted = true;
      results.push({ toolUseId: call.id, content: INTERRUPTED_CALL_RESULT, isError: true });
    }
  }
  return { afterSeq, results, notStarted, feedback: feedback.length ? feedback.join("\n") : undefined };
}

/** Every call's result when the task goes on with the person's new words instead of Resume. */
export function settledWithoutRerun(turn: StoppedTurn): ToolResultsData {
  return {
    results: [
      ...turn.results,
      ...turn.notStarted.map((c) => ({ toolUseId: c.id, content: NOT_RUN_BEFORE_MESSAGE, isError: true })),
    ],
    feedback: turn.feedback,
  };
}
