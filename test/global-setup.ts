import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Each test run gets its own temporary folder, TMPDIR for the test processes and everything they
 * start (sidecars, git, Neovim, code-server), removed when the run ends: the suite makes
 * thousands of folders holding real repositories and databases, which would otherwise pile up
 * in the system's temporary folder run after run. DLINE_KEEP_TEST_TMP=1 keeps it for a look
 * after a failure.
 */
export default function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-run-"));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  // What test files share for the whole run (the model server's bundle) stays here; each file's
  // own things go to a folder of its own inside (test/file-tmp-setup.ts).
  process.env.DLINE_TEST_RUN_TMP = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    delete process.env.DLINE_TEST_RUN_TMP;
    if (process.env.DLINE_KEEP_TEST_TMP) {
      console.log(`test temporary files kept in ${dir}`);
      return;
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      console.warn(`could not remove the test temporary folder ${dir}: ${(err as Error).message}`);
    }
  };
}
