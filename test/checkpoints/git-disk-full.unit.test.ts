import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GitError } from "../../core/src/checkpoints/git-process.js";
import { isDiskFull } from "../../core/src/errors.js";
import { toConnectError } from "../../core/src/rpc/connect-errors.js";

// Found in a crash test: with the checkpoints' disk almost full, Compare and Restore answered
// `internal: Internal error in the Dline core; see its log.` (git had said "No space left on
// device"), where a full disk elsewhere answers resource_exhausted.
describe("git saying the disk is full", () => {
  it.each([
    ["fatal: unable to write loose object file: No space left on device", "ENOSPC"],
    ["fatal: sha1 file '.git/objects/pack/tmp_pack_x' write error. Out of diskspace", "ENOSPC"],
    ["error: unable to write file: Disk quota exceeded", "EDQUOT"],
  ])("is answered as a full disk: %s", (stderr, code) => {
    const err = new GitError("git update-index failed (128)", ["update-index"], stderr, 128);
    expect(err.code).toBe(code);
    expect(isDiskFull(err)).toBe(true);
    const answer = toConnectError(err);
    expect(answer.code).toBe(Code.ResourceExhausted);
    expect(answer.rawMessage).toBe("The disk is full.");
  });

  it("any other failure stays what it was", () => {
    const err = new GitError("git status failed (128)", ["status"], "fatal: index file corrupt", 128);
    expect(isDiskFull(err)).toBe(false);
    expect(toConnectError(err).code).toBe(Code.Internal);
  });
});
