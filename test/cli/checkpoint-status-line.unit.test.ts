import { PassThrough } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CheckpointStatusLine } from "../../adapters/cli/src/render.js";
import { CHECKPOINT_MESSAGES } from "../../core/src/checkpoints/index.js";
import { CheckpointStatusChangedSchema } from "../../core/src/gen/dline/v1/task_pb.js";

function linesFor(
  statuses: { state: string; message: string; phase?: string; filesDone?: bigint; filesTotal?: bigint }[],
): string[] {
  const out = new PassThrough();
  let text = "";
  out.on("data", (b: Buffer) => (text += b.toString("utf8")));
  const line = new CheckpointStatusLine(out);
  for (const s of statuses) line.render(create(CheckpointStatusChangedSchema, s));
  return text.split("\n").filter(Boolean);
}

describe("checkpoint status lines without a terminal", () => {
  it("say when initialization waits for another window's lock, once, then go on as usual", () => {
    const waiting = CHECKPOINT_MESSAGES.waitingForLock(4242);
    expect(
      linesFor([
        { state: "CHECKPOINT_STATE_INITIALIZING", message: CHECKPOINT_MESSAGES.initializing },
        { state: "CHECKPOINT_STATE_INITIALIZING", message: waiting },
        { state: "CHECKPOINT_STATE_INITIALIZING", message: waiting },
        { state: "CHECKPOINT_STATE_INITIALIZING", message: CHECKPOINT_MESSAGES.initializing },
        { state: "CHECKPOINT_STATE_INITIALIZING", message: CHECKPOINT_MESSAGES.initializing, phase: "scanning" },
        { state: "CHECKPOINT_STATE_READY", message: CHECKPOINT_MESSAGES.ready },
      ]),
    ).toEqual([
      "checkpoints initializing",
      `checkpoints initializing: ${waiting}`,
      "checkpoints initializing",
      "checkpoints initializing: scanning the workspace",
      "checkpoints ready",
    ]);
  });

  it("count one file as one file ('taking in 1 files' before)", () => {
    const staging = (filesTotal: bigint) => ({
      state: "CHECKPOINT_STATE_INITIALIZING",
      message: CHECKPOINT_MESSAGES.initializing,
      phase: "staging",
      filesDone: 0n,
      filesTotal,
    });
    expect(linesFor([staging(1n)])).toEqual(["checkpoints initializing: taking in 1 file"]);
    expect(linesFor([staging(1202n)])).toEqual(["checkpoints initializing: taking in 1,202 files"]);
  });
});
