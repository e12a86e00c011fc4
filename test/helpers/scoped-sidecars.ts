import * as fs from "node:fs";
import { afterEach } from "vitest";
import { makeTestRoots, startSidecar, type RunningSidecar, type TestRoots } from "./sidecar.js";

/**
 * Roots and sidecars that belong to one test: after each test the sidecars stop and the roots'
 * folders go. Call once at the top of a test file.
 */
export function scopedSidecars(): {
  testRoots(prefix: string): TestRoots;
  /** `cwd`: the sidecar's current folder (default: the roots' base folder). */
  sidecar(roots?: TestRoots, options?: { cwd?: string }): Promise<RunningSidecar>;
  /** Runs after the test with the sidecars' stops (e.g. a model server's). */
  onCleanup(cleanup: () => Promise<unknown>): void;
} {
  const cleanups: (() => Promise<unknown>)[] = [];
  const temps: string[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
    for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    testRoots(prefix) {
      const roots = makeTestRoots(prefix);
      temps.push(roots.base);
      return roots;
    },
    async sidecar(roots, options = {}) {
      const s = await startSidecar({ roots, cwd: options.cwd });
      cleanups.push(() => s.stop());
      return s;
    },
    onCleanup(cleanup) {
      cleanups.push(cleanup);
    },
  };
}
