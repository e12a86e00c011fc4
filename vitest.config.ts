import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "core/src/**/*.test.ts"],
    // Tests spawn real sidecars, git and SQLite; the machines have 2 cores.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
    // A temporary folder per run, removed at the end (test/global-setup.ts).
    globalSetup: ["test/global-setup.ts"],
    // …and one inside it per test file, removed when the file ends (test/file-tmp-setup.ts).
    setupFiles: ["test/file-tmp-setup.ts"],
  },
});
