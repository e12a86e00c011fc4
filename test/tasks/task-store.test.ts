import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import type { TaskStorage } from "../../core/src/tasks/task-storage.js";
import { buildChild, exited, lineCollector, openStorage, runChild, taskEnv, type TaskEnv } from "./helpers.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});
async function storageFor(env: TaskEnv): Promise<TaskStorage> {
  const s = await openStorage(env);
  cleanup.push(() => s.close());
  return s;
}

describe("TaskStore", () => {
  it("creates a task once: folder, metadata, history row, claim", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    const w = s.store.create({ id: "new-1", title: "First", workspaceRoot: "/ws" });
    expect(s.ownership.holds("new-1")).toBe(true);
    expect(JSON.parse(fs.readFileSync(env.layout.task("new-1").metadataJson, "utf8"))).toMatchObject({
      id: "new-1",
      title: "First",
      workspaceRoot: "/ws",
    });
    w.files.messages.append(uiMessage({ id: "m1", text: "x".repeat(5000) }));
    w.release();
    expect(s.ownership.holds("new-1")).toBe(false);
    expect(() => s.store.create({ id: "new-1" })).toThrow(DlineError);
    await s.store.refreshSize("new-1");
    expect(s.history.get("new-1")!.sizeBytes).toBeGreaterThan(5000);
  });

  it("a history row whose folder is gone is listed as damaged, not as an intact empty task", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    s.history.put({ id: "ghost", title: "ghost" });
    const view = s.store.get("ghost");
    expect(view.record).toMatchObject({ status: "damaged", damagedReason: "the task folder is missing" });
    expect(s.history.get("ghost")!.status).toBe("damaged");
  });

  it("a reader that does not own the task falls back to state.json.bak without moving files", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    const w = s.store.create({ id: "owned" });
    w.files.state.write({ v: 1 });
    w.files.state.write({ v: 2 });
    w.release();
    const t = env.layout.task("owned");
    fs.writeFileSync(t.stateJson, '{"v": 3, "to');
    const child = runChild(await buildChild("task-worker"), ["claim", env.layout.roots.documentsRoot, "owned"]);
    cleanup.push(async () => {
      child.kill("SIGKILL");
      await exited(child);
    });
    await lineCollector(child).waitFor((l) => l.some((x) => x.startsWith("claimed")));
    const view = s.store.get("owned");
    expect(view.record.status).toBe("completed");
    expect(view.ownerPid).toBe(child.pid);
    expect(fs.readFileSync(t.stateJson, "utf8")).toBe('{"v": 3, "to'); // the owner's file was not touched
  });
});
