/**
 * The extensionTestsPath module: VS Code calls run() in the extension host and reports its
 * outcome as the test run's exit code. DLINE_E2E_SUITE picks the suite: "e2e" (the extension's
 * end-to-end checks), "limits" (checkpoint limits), "core-problem" (a sidecar that cannot start),
 * "restore-notices" (what a restore kept as it was; approval diffs closed while opening),
 * "asked-again" (an approval asked again after its file changed on disk says why),
 * "approvals-restore" (approvals in a long chat, a reject's feedback, a confirmed restore and its Undo),
 * "undo-cut-off" (an Undo the core refuses for a while, Restore Files Only after a file restore, an
 * answer cut off by Cancel), "reading-history" (a restore over unsaved changes, a long answer
 * read while it streams, an answer cut at the output limit, history by keyboard), "left-out" (the
 * checkpoint pick's rows, Compare of a change the checkpoints do not track), "checkpoint-repair"
 * (a repaired checkpoint store told once; Compare and Restore waiting for another window holding
 * the checkpoints told once) or "conformance" (the cross-client scenario of
 * test/conformance).
 */
import { defineApprovalsRestoreSuite } from "./approvals-restore-suite.js";
import { defineCheckpointRepairSuite } from "./checkpoint-repair-suite.js";
import { defineConformanceSuite } from "./conformance-suite.js";
import { defineCoreProblemSuite } from "./core-problem-suite.js";
import { defineE2eSuite, defineLimitsSuite } from "./e2e-suite.js";
import { defineLeftOutSuite } from "./left-out-suite.js";
import { defineReadingHistorySuite } from "./reading-history-suite.js";
import { defineRestoreNoticesSuite } from "./restore-notices-suite.js";
import { defineAskedAgainSuite } from "./asked-again-suite.js";
import { defineUndoCutOffSuite } from "./undo-cut-off-suite.js";
import { required } from "./helpers.js";
import { TestSuite } from "./runner.js";

export async function run(): Promise<void> {
  const outDir = required("DLINE_E2E_OUT");
  const suite = new TestSuite(outDir);
  const name = process.env.DLINE_E2E_SUITE ?? "e2e";
  if (name === "e2e") defineE2eSuite(suite, outDir);
  else if (name === "conformance") defineConformanceSuite(suite, outDir);
  else if (name === "limits") defineLimitsSuite(suite, outDir);
  else if (name === "core-problem") defineCoreProblemSuite(suite, outDir);
  else if (name === "restore-notices") defineRestoreNoticesSuite(suite, outDir);
  else if (name === "asked-again") defineAskedAgainSuite(suite, outDir);
  else if (name === "approvals-restore") defineApprovalsRestoreSuite(suite, outDir);
  else if (name === "undo-cut-off") defineUndoCutOffSuite(suite, outDir);
  else if (name === "reading-history") defineReadingHistorySuite(suite, outDir);
  else if (name === "left-out") defineLeftOutSuite(suite, outDir);
  else if (name === "checkpoint-repair") defineCheckpointRepairSuite(suite, outDir);
  else throw new Error(`unknown DLINE_E2E_SUITE ${name}`);
  const results = await suite.run();
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0)
    throw new Error(
      `${failed.length} of ${results.length} extension tests failed: ${failed.map((f) => f.name).join("; ")}`,
    );
}
