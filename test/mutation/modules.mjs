/**
 * The modules that guard user data, each with the in-process tests that pin its behaviour.
 * Stryker mutates one module at a time and runs only these tests against it (the sidecar
 * binary's tests cannot see a mutant of the sources, so every behaviour is tested in process).
 */
export const mutationModules = [
  {
    name: "settings-repository",
    mutate: ["core/src/storage/settings-repository.ts"],
    testFiles: ["test/storage/settings-repository.test.ts", "test/storage/settings-watch.test.ts"],
  },
  {
    name: "deletion-coordinator",
    mutate: ["core/src/tasks/deletion-coordinator.ts"],
    testFiles: ["test/tasks/ownership-deletion.test.ts", "test/tasks/deletion-safety.test.ts"],
  },
  {
    name: "search-replace",
    mutate: ["core/src/agent/tools/search-replace.ts"],
    testFiles: ["test/agent/replace-in-file.test.ts", "test/agent/search-replace.test.ts"],
  },
  {
    name: "import-committer",
    mutate: ["core/src/import/import-committer.ts"],
    testFiles: ["test/import/import-commit.test.ts"],
  },
];

/** Detected / valid mutants (percent) below which `npm run test:mutation` fails. */
export const breakThreshold = 80;
