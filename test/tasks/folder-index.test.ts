import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../core/src/logging/logger.js";
import { indexOrphanFolders } from "../../core/src/tasks/folder-index.js";
import { openStorage, taskEnv } from "./helpers.js";

describe("indexing task folders without a history row", () => {
  it("indexes task folders (an empty one as damaged), never lock folders", async () => {
    const env = taskEnv();
    const storage = await openStorage(env);
    try {
      const orphan = env.layout.task("orphan-1");
      fs.mkdirSync(orphan.dir, { recursive: true });
      fs.writeFileSync(orphan.metadataJson, JSON.stringify({ title: "an orphan", workspaceRoot: "/ws", createdAt: 5 }));
      const torn = env.layout.task("torn-2");
      fs.mkdirSync(torn.dir, { recursive: true });
      fs.writeFileSync(torn.stateJson, "{}");
      // Not a task: a proper-lockfile lock folder. An empty folder is listed (damaged), not hidden.
      fs.mkdirSync(path.join(env.layout.tasksDir, "pending-deletions.json.lock"));
      fs.mkdirSync(path.join(env.layout.tasksDir, "empty-folder"));
      const added = indexOrphanFolders(env.layout, storage.history, silentLogger());
      expect(added.sort()).toEqual(["empty-folder", "orphan-1", "torn-2"]);
      expect(storage.history.get("orphan-1")?.title).toBe("an orphan");
      expect(storage.history.get("torn-2")?.status).toBe("damaged");
    } finally {
      await storage.close();
    }
  });

  it("a folder holding only a process's scratch is no task: not listed, and removed once old", async () => {
    const env = taskEnv();
    const storage = await openStorage(env);
    try {
      // What an older version's window that still showed a deleted task wrote into its folder again.
      const old = env.layout.task("1700000000002-0ld5he11");
      fs.mkdirSync(old.shownSeqsDir, { recursive: true });
      fs.writeFileSync(path.join(old.shownSeqsDir, "4194305"), "12\n");
      const longAgo = new Date(Date.now() - 10 * 60_000);
      fs.utimesSync(old.dir, longAgo, longAgo);
      // The same, just made: it may be a task whose creator has not claimed it yet, so it stays.
      const young = env.layout.task("1700000000003-70un6she");
      fs.mkdirSync(young.tmpDir, { recursive: true });
      const added = indexOrphanFolders(env.layout, storage.history, silentLogger());
      expect(added).toEqual([]);
      expect(fs.existsSync(old.dir)).toBe(false);
      expect(fs.existsSync(young.dir)).toBe(true);
      expect(storage.history.get("1700000000003-70un6she")).toBeUndefined();
    } finally {
      await storage.close();
    }
  });

  it("every start indexes the folder of a task whose creator was killed, but not one a live process is creating", async () => {
    const env = taskEnv();
    // A sidecar killed while it created a task: folder, metadata and a claim of a dead process.
    const killed = env.layout.task("1700000000000-deadbeef");
    fs.mkdirSync(killed.dir, { recursive: true });
    fs.writeFileSync(
      killed.metadataJson,
      JSON.stringify({ id: "1700000000000-deadbeef", title: "half made", workspaceRoot: "/ws", createdAt: 7 }),
    );
    const dead = spawn(process.execPath, ["-e", "0"]);
    await new Promise((r) => dead.once("exit", r));
    fs.writeFileSync(
      killed.ownerLock,
      JSON.stringify({ pid: dead.pid, hostname: os.hostname(), since: Date.now(), purpose: "run" }),
    );
    // Another process (alive) is creating this one right now: its row comes with it.
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
    try {
      const creating = env.layout.task("1700000000001-c0ffee00");
      fs.mkdirSync(creating.dir, { recursive: true });
      fs.writeFileSync(
        creating.ownerLock,
        JSON.stringify({ pid: live.pid, hostname: os.hostname(), since: Date.now(), purpose: "run" }),
      );
      const storage = await openStorage(env);
      try {
        expect(storage.history.get("1700000000000-deadbeef")).toMatchObject({
          title: "half made",
          status: "interrupted",
        });
        expect(storage.history.get("1700000000001-c0ffee00")).toBeUndefined();
      } finally {
        await storage.close();
      }
    } finally {
      live.kill();
    }
  });
});
