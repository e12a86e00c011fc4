import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceCheckpoints } from "../../core/src/checkpoints/workspace-checkpoints.js";
import { silentLogger } from "../../core/src/logging/logger.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

/**
 * One folder opened through a link and through its real path (two windows, each its own
 * sidecar), found in a bug hunt through the CLI: each path had its own shadow repository and
 * lock, so the repository of the task run through the link never saw the saves of the task run
 * through the real path; that task's command save took their changes for its own, and restoring
 * it deleted the other task's new file and reverted its edit.
 */
function twoWindows() {
  const sb = makeSandbox();
  const link = path.join(sb.base, "link-to-project");
  fs.symlinkSync(sb.workspace, link);
  const conversation = new FileConversation(path.join(sb.base, "conversations"), {
    viaLink: [link],
    viaReal: [sb.workspace],
  });
  const throughLink = makeManager(sb, { conversation });
  const throughReal = makeManager(sb, { conversation });
  return { sb, link, throughLink, throughReal };
}

describe("a folder opened through a link and through its real path", () => {
  it("shares one repository: restoring the task run through the link leaves the other task's changes", async () => {
    const { sb, link, throughLink, throughReal } = twoWindows();
    const ws = sb.workspace;
    write(ws, "shared.txt", "v0\n");
    write(ws, "other.txt", "keep\n");
    const a = { id: "viaLink", workspaceRoots: [link] };
    const b = { id: "viaReal", workspaceRoots: [ws] };
    const baseA = (await throughLink.ensureBaseline(a))!;
    await throughLink.beforeEdit(a, ["shared.txt"]);
    write(ws, "shared.txt", "A\n");
    await throughLink.saveTurn(a, { editedPaths: ["shared.txt"] });
    // While A's command runs, B (through the real path) makes a file and edits another.
    await throughReal.ensureBaseline(b);
    await throughReal.beforeEdit(b, ["b_new.txt", "other.txt"]);
    write(ws, "b_new.txt", "B work\n");
    write(ws, "other.txt", "keep B\n");
    await throughReal.saveTurn(b, { editedPaths: ["b_new.txt", "other.txt"] });
    await throughLink.ensureBaseline(a);
    write(ws, "a_cmd.txt", "A\n");
    await throughLink.saveTurn(a, { commandRan: true });

    expect(fs.readdirSync(sb.layout.checkpointsDir).filter((n) => !n.startsWith("."))).toHaveLength(1);
    const outcome = await throughLink.restore("viaLink", baseA.id, "files");
    expect([...outcome.deletedPaths].sort()).toEqual(["a_cmd.txt"]);
    expect(outcome.restoredPaths).toEqual(["shared.txt"]);
    expect(read(ws, "shared.txt")).toBe("v0\n");
    expect(read(ws, "b_new.txt")).toBe("B work\n");
    expect(read(ws, "other.txt")).toBe("keep B\n");
    await throughLink.stop();
    await throughReal.stop();
  });

  it("the checkpoints setting a person turned off for the workspace under the link's path still holds", async () => {
    const sb = makeSandbox();
    const link = path.join(sb.base, "link-to-project");
    fs.symlinkSync(sb.workspace, link);
    write(sb.workspace, "a.txt", "a\n");
    // The workspace's settings are kept under the path the person opened it by.
    const manager = makeManager(sb, { isEnabled: (root) => root !== link });
    expect(await manager.ensureBaseline({ id: "t1", workspaceRoots: [link] })).toBeUndefined();
    expect((await manager.status({ workspaceRoot: link })).state).toBe("disabled");
    expect(fs.existsSync(sb.layout.checkpointsDir)).toBe(false);
    await manager.stop();
  });

  it("a link pointed at another folder since is that folder: a restore there writes nothing of the first", async () => {
    const sb = makeSandbox();
    const projA = path.join(sb.base, "projA");
    const projB = path.join(sb.base, "projB");
    write(projA, "a.txt", "A's file\n");
    write(projB, "b1.txt", "B's own\n");
    const cur = path.join(sb.base, "cur");
    fs.symlinkSync(projA, cur);
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [cur] });
    const manager = makeManager(sb, { conversation });
    const task = { id: "t1", workspaceRoots: [cur] };
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["a.txt"]);
    write(projA, "a.txt", "edited\n");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    await manager.stop();

    fs.unlinkSync(cur);
    fs.symlinkSync(projB, cur);
    const again = makeManager(sb, { conversation });
    const refused = await again.restore("t1", base.id, "files").then(
      () => undefined,
      (e: Error) => e,
    );
    // Its checkpoints are in projA's repository: none of them is offered for projB, and the
    // refusal says where they are.
    expect((refused as { code?: string })?.code).toBe("failed_precondition");
    expect(refused?.message).toContain(`were saved for ${projA}`);
    expect(refused?.message).toContain(`leads to ${projB} now`);
    await expect(again.compare("t1", base.id)).rejects.toThrow(/were saved for/);
    await expect(again.list("t1")).rejects.toThrow(/were saved for/);
    expect(fs.readdirSync(projB)).toEqual(["b1.txt"]);
    expect(read(projB, "b1.txt")).toBe("B's own\n");
    expect(read(projA, "a.txt")).toBe("edited\n");
    await again.stop();
  });

  it("a task whose checkpoints an earlier version kept under the link's path still finds them there", async () => {
    const sb = makeSandbox();
    const link = path.join(sb.base, "link-to-project");
    fs.symlinkSync(sb.workspace, link);
    write(sb.workspace, "a.txt", "a\n");
    // What the code before kept: a repository for the link's own path.
    const legacy = new WorkspaceCheckpoints({
      workspaceRoot: link,
      repoDir: sb.layout.checkpointRepoDir(link),
      env: sb.env,
      sizeLimitBytes: 5 * 1024 * 1024,
      lockStaleMs: 10_000,
      lockWaitMs: 10_000,
      logger: silentLogger(),
    });
    const base = await legacy.save({
      taskId: "old",
      kind: "baseline",
      messageId: "",
      editedPaths: [],
      scan: true,
      hasFiles: true,
    });
    write(sb.workspace, "a.txt", "b\n");
    await legacy.save({
      taskId: "old",
      kind: "turn",
      messageId: "",
      editedPaths: ["a.txt"],
      scan: false,
      hasFiles: true,
    });
    await legacy.stop();

    const conversation = new FileConversation(path.join(sb.base, "conversations"), {
      old: [link],
      fresh: [link],
    });
    const manager = makeManager(sb, { conversation });
    expect((await manager.list("old")).map((c) => c.kind)).toEqual(["baseline", "turn"]);
    const outcome = await manager.restore("old", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["a.txt"]);
    expect(read(sb.workspace, "a.txt")).toBe("a\n");
    // A new task through the link is kept under the folder's real path.
    await manager.ensureBaseline({ id: "fresh", workspaceRoots: [link] });
    expect(fs.existsSync(path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git"))).toBe(true);
    await manager.stop();
  });
});
