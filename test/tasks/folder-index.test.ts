import * as fs from "node:fs";
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
});
