/**
 * A repaired checkpoint store (its index rebuilt, its HEAD put back, the repository set aside and
 * started again) leaves checkpoints ready with a sentence of its own, naming where the damaged
 * files were kept. VS Code showed nothing for a ready status: the person was never told. The
 * chat controller shows each such sentence once as an information message (repair-notice.ts);
 * the wiring is checked in code-server by the "checkpoint-repair" suite of test/vscode/e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MESSAGES } from "../../core/src/checkpoints/workspace-guard.js";
import { CheckpointState } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { CHECKPOINTS_READY, RepairNotices, repairNote } from "../../adapters/vscode/src/checkpoints/repair-notice.js";

const INDEX_REBUILT = MESSAGES.indexRebuilt("/docs/checkpoints/1a2b/.git/index.corrupt-1765000000000");
const HEAD_REPAIRED = MESSAGES.headRepaired("/docs/checkpoints/1a2b/.git/HEAD.corrupt-1765000000000");
const REBUILT = MESSAGES.rebuilt("/docs/checkpoints/1a2b/.git.corrupt-1765000000000");

describe("checkpoint repair notices", () => {
  it("plain ready is the core's own sentence and says nothing", () => {
    expect(CHECKPOINTS_READY).toBe(MESSAGES.ready);
    expect(repairNote("CHECKPOINT_STATE_READY", MESSAGES.ready)).toBeUndefined();
    expect(repairNote("CHECKPOINT_STATE_READY", "")).toBeUndefined();
  });

  it("a ready status after a repair gives its sentence, from the stream's state name or GetStatus's enum", () => {
    expect(repairNote("CHECKPOINT_STATE_READY", INDEX_REBUILT)).toBe(INDEX_REBUILT);
    expect(repairNote(CheckpointState[CheckpointState.READY], HEAD_REPAIRED)).toBe(HEAD_REPAIRED);
    expect(repairNote("ready", REBUILT)).toBe(REBUILT);
  });

  it("other states have sentences of their own, shown elsewhere (the header, the progress line)", () => {
    expect(repairNote("CHECKPOINT_STATE_INITIALIZING", MESSAGES.initializing)).toBeUndefined();
    expect(repairNote("CHECKPOINT_STATE_FAILED", "boom")).toBeUndefined();
    expect(repairNote(CheckpointState[CheckpointState.UNAVAILABLE], MESSAGES.gitMissing)).toBeUndefined();
  });

  it("shows each repair sentence once, however often the stream and GetStatus repeat it", () => {
    const shown: string[] = [];
    const notices = new RepairNotices((note) => shown.push(note));
    expect(notices.offer("CHECKPOINT_STATE_INITIALIZING", MESSAGES.initializing)).toBe(false);
    expect(notices.offer("CHECKPOINT_STATE_READY", INDEX_REBUILT)).toBe(true);
    expect(notices.offer("READY", INDEX_REBUILT)).toBe(false);
    expect(notices.offer("CHECKPOINT_STATE_READY", MESSAGES.ready)).toBe(false);
    // Another repair later (a new aside folder) is news again.
    expect(notices.offer("CHECKPOINT_STATE_READY", HEAD_REPAIRED)).toBe(true);
    expect(notices.offer("CHECKPOINT_STATE_READY", INDEX_REBUILT)).toBe(false);
    expect(shown).toEqual([INDEX_REBUILT, HEAD_REPAIRED]);
  });
});
