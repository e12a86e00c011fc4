import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll } from "vitest";

/**
 * Each test file gets its own temporary folder inside the run's (test/global-setup.ts), removed
 * when the file ends: release builds, code-server profiles and big workspaces add up to gigabytes
 * over a run, and a machine with little free disk filled up before the run's end removed them.
 * DLINE_KEEP_TEST_TMP=1 keeps it for a look after a failure.
 */
const fileTmp = fs.mkdtempSync(path.join(os.tmpdir(), "file-"));
process.env.TMPDIR = fileTmp;

afterAll(() => {
  if (process.env.DLINE_KEEP_TEST_TMP) return;
  try {
    fs.rmSync(fileTmp, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    // What is left (a mount a test failed to take down, a file still open) goes with the run's folder.
    console.warn(`could not remove the test file's temporary folder ${fileTmp}: ${(err as Error).message}`);
  }
});
