// Stryker configuration for one module of test/mutation/modules.mjs, named by
// DLINE_MUTATION_MODULE (scripts/mutation.mjs sets it for each module in turn).
import { breakThreshold, mutationModules } from "./modules.mjs";

const name = process.env.DLINE_MUTATION_MODULE;
const module = mutationModules.find((m) => m.name === name);
if (!module) {
  throw new Error(`DLINE_MUTATION_MODULE must name one of: ${mutationModules.map((m) => m.name).join(", ")}`);
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "test/mutation/vitest.config.mjs", related: false },
  mutate: module.mutate,
  coverageAnalysis: "perTest",
  // The machines have 2 cores, shared; the tests run real git and SQLite.
  concurrency: Number(process.env.DLINE_MUTATION_CONCURRENCY ?? 2),
  timeoutMS: 20_000,
  dryRunTimeoutMinutes: 20,
  thresholds: { high: 90, low: breakThreshold, break: breakThreshold },
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: `test-output/mutation/${module.name}.json` },
  // A later run retests only the mutants whose code or covering test files changed (--force: all).
  incremental: true,
  incrementalFile: `test-output/mutation/${module.name}.incremental.json`,
  clearTextReporter: { allowColor: false, logTests: false },
  tempDirName: `.stryker-tmp/${module.name}`,
  // Only what the in-process tests load is copied into the sandbox.
  ignorePatterns: ["dist", "adapters", "bench", "docs", ".cache", "test-output", ".scratch", ".bench", ".stryker-tmp"],
  cleanTempDir: true,
};
