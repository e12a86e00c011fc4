/**
 * Restore All of an edited message writes the files of a checkpoint the core chooses; the
 * extension saves the unsaved editors among those files first, so it chooses the same one.
 */
import { describe, expect, it } from "vitest";
import { CheckpointKind } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { restoreAllCheckpoint } from "../../adapters/vscode/src/checkpoints/restore-options.js";

const cp = (id: string, createdAt: number, messageId = "", kind = CheckpointKind.TURN, hasFiles = true) => ({
  id,
  kind,
  createdAt: BigInt(createdAt),
  messageId,
  hasFiles,
});

describe("the checkpoint Restore All restores", () => {
  const cps = [
    cp("base", 100, "m1", CheckpointKind.BASELINE),
    cp("t1", 200, "m2"),
    cp("none", 250, "m3", CheckpointKind.TURN, false),
    cp("undo", 300, "m2", CheckpointKind.BEFORE_RESTORE),
    cp("t2", 400, "m4"),
  ];

  it("is the message's own checkpoint with files, never an undo point naming it", () => {
    expect(restoreAllCheckpoint(cps, "m2", 150)?.id).toBe("t1");
    expect(restoreAllCheckpoint(cps, "m1", undefined)?.id).toBe("base");
  });

  it("else the last one saved before the message, else the first", () => {
    expect(restoreAllCheckpoint(cps, "m3", 260)?.id).toBe("t1");
    expect(restoreAllCheckpoint(cps, "m9", 50)?.id).toBe("base");
  });

  it("is unknown when the message has no checkpoint of its own and its time is unknown", () => {
    expect(restoreAllCheckpoint(cps, "m9", undefined)).toBeUndefined();
    expect(restoreAllCheckpoint([], "m1", 500)).toBeUndefined();
  });
});
