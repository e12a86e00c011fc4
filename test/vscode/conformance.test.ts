/**
 * Conformance of the VS Code extension: the scenario of test/conformance played through the
 * extension in a real VS Code leaves the same workspace files, database rows and checkpoint
 * trees as the CLI (the reference client), after the edit and after the deletion.
 */
import { describe, expect, it } from "vitest";
import { cliDriver } from "../conformance/drivers/cli-driver.js";
import { play } from "../conformance/play.js";
import { vscodeDriver } from "./conformance-driver.js";

describe("conformance: the VS Code extension leaves the same state as the CLI", () => {
  it("VS Code and the CLI agree on files, databases and checkpoint trees", { timeout: 600_000 }, async () => {
    const cli = await play(cliDriver);
    const vscode = await play(vscodeDriver);
    // The scenario did something (equal snapshots are not equally empty).
    expect(cli.afterEdit.tasks).toHaveLength(1);
    expect(cli.afterDelete.tasks).toHaveLength(0);
    expect(vscode.result.compare).toEqual(cli.result.compare);
    expect(vscode.afterEdit).toEqual(cli.afterEdit);
    expect(vscode.afterDelete).toEqual(cli.afterDelete);
  });
});
