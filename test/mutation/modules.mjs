/**
 * The modules that guard user data, each with the in-process tests that pin its behaviour.
 * Stryker mutates one module at a time and runs only these tests against it (the sidecar
 * binary's tests cannot see a mutant of the sources, so every behaviour is tested in process).
 */
export const mutationModules = [
  {
    name: "settings-repository",
    mutate: ["core/src/storage/settings-repository.ts"],
    testFiles: ["test/storage/settings-repository.unit.test.ts", "test/storage/settings-watch.test.ts"],
  },
  {
    name: "deletion-coordinator",
    mutate: ["core/src/tasks/deletion-coordinator.ts"],
    testFiles: ["test/tasks/ownership-deletion.test.ts", "test/tasks/deletion-safety.test.ts"],
  },
  {
    name: "search-replace",
    mutate: ["core/src/agent/tools/search-replace.ts"],
    testFiles: ["test/agent/replace-in-file.unit.test.ts", "test/agent/search-replace.unit.test.ts"],
  },
  {
    name: "import-committer",
    mutate: ["core/src/import/import-committer.ts"],
    testFiles: ["test/import/import-commit.unit.test.ts"],
  },
  {
    name: "snapshot-restore",
    mutate: ["core/src/checkpoints/snapshot-restore.ts"],
    testFiles: [
      "test/checkpoints/restore.test.ts",
      "test/checkpoints/restore-safety.test.ts",
      "test/checkpoints/restore-guards.test.ts",
      "test/checkpoints/save-shapes.test.ts",
      "test/checkpoints/fast-paths.test.ts",
      "test/checkpoints/preimages.test.ts",
      "test/checkpoints/restore-writes.test.ts",
    ],
  },
  {
    name: "restore-flow",
    mutate: ["core/src/checkpoints/restore-flow.ts"],
    testFiles: ["test/checkpoints/restore.test.ts", "test/checkpoints/restore-choice.test.ts"],
  },
  {
    // The save path: a turn's recorded paths, the paths the workspace watcher saw after a
    // command, and the pre-images taken before a tool first changes a file.
    name: "checkpoint-save",
    mutate: [
      "core/src/checkpoints/recorded-save.ts",
      "core/src/checkpoints/watched-paths.ts",
      "core/src/checkpoints/edit-captures.ts",
    ],
    testFiles: [
      "test/checkpoints/fast-paths.test.ts",
      "test/checkpoints/watched-saves.test.ts",
      "test/checkpoints/restore-safety.test.ts",
      "test/checkpoints/restore-guards.test.ts",
      "test/checkpoints/save-shapes.test.ts",
      "test/checkpoints/preimages.test.ts",
      "test/checkpoints/later-task.test.ts",
      "test/checkpoints/save-path.test.ts",
      "test/checkpoints/watched-paths.unit.test.ts",
    ],
  },
];

/** Detected / valid mutants (percent) below which `npm run test:mutation` fails. */
export const breakThreshold = 80;
