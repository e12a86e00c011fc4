/**
 * The workspace watcher and the kernel's inotify queue: Node does not report a queue that
 * overflowed (its events are dropped), so a burst of events that may have reached the queue's
 * length makes the next save scan. On a machine whose queue is shorter than usual
 * (fs.inotify.max_queued_events lowered to 512), a command appending to 3,729 files left 311 of
 * them out of its checkpoint: the watcher trusted anything up to 8,000 events.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceWatcher } from "../../core/src/checkpoints/workspace-watcher.js";

const made: string[] = [];
const watchers: WorkspaceWatcher[] = [];
afterEach(() => {
  for (const w of watchers.splice(0)) w.close();
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A workspace of `n` files in folders of 20, watched; resolves once every folder is. */
async function watchedWorkspace(n: number, queueLimit: number): Promise<{ root: string; watcher: WorkspaceWatcher }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "dline-watch-queue-"));
  made.push(root);
  for (let i = 0; i < n; i++) {
    fs.mkdirSync(path.join(root, `d${Math.floor(i / 20)}`), { recursive: true });
    fs.writeFileSync(path.join(root, `d${Math.floor(i / 20)}`, `f${i}.txt`), `${i}\n`);
  }
  const watcher = new WorkspaceWatcher(root, () => false, queueLimit);
  watchers.push(watcher);
  await watcher.start();
  return { root, watcher };
}

/** Appends to files 0..count-1, then lets the event loop read what the kernel queued. */
async function appendTo(root: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) fs.appendFileSync(path.join(root, `d${Math.floor(i / 20)}`, `f${i}.txt`), "more\n");
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("the workspace watcher and the kernel's event queue", () => {
  it("a burst reaching half of a short queue (512 events) is not trusted: the save scans", async () => {
    const { root, watcher } = await watchedWorkspace(400, 512);
    watcher.drain();
    await appendTo(root, 300);
    expect(watcher.drain()).toBeUndefined();
  });

  it("fewer events than that are trusted, every changed file named", async () => {
    const { root, watcher } = await watchedWorkspace(400, 512);
    watcher.drain();
    await appendTo(root, 40);
    const changed = watcher.drain();
    expect(changed).toBeDefined();
    expect(new Set(changed)).toEqual(new Set(Array.from({ length: 40 }, (_, i) => `d${Math.floor(i / 20)}/f${i}.txt`)));
  });
});

describe("files and folders that go", () => {
  /** Lets the event loop read what the kernel queued, and the watcher's lstat of each path answer. */
  const settle = async () => {
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it("files rewritten through temporary files (sed -i) are each named; a folder removed and made again is watched again", async () => {
    const { root, watcher } = await watchedWorkspace(200, 16384);
    fs.mkdirSync(path.join(root, "d0", "sub", "deeper"), { recursive: true });
    await settle();
    watcher.drain();
    // As sed -i does: a temporary file written, then renamed over the file (the temporary name goes).
    for (let i = 0; i < 60; i++) {
      const file = path.join(root, `d${Math.floor(i / 20)}`, `f${i}.txt`);
      const tmp = path.join(path.dirname(file), `sed${i}`);
      fs.writeFileSync(tmp, `${i}\nedited\n`);
      fs.renameSync(tmp, file);
    }
    fs.rmSync(path.join(root, "d0", "sub"), { recursive: true });
    await settle();
    const changed = watcher.drain()!;
    for (let i = 0; i < 60; i++) expect(changed).toContain(`d${Math.floor(i / 20)}/f${i}.txt`);
    expect(changed).toContain("d0/sub");

    // The folder made again (and one below it): watched again, its files' changes seen.
    fs.mkdirSync(path.join(root, "d0", "sub", "deeper"), { recursive: true });
    await settle();
    watcher.drain();
    fs.writeFileSync(path.join(root, "d0", "sub", "deeper", "new.txt"), "new\n");
    await settle();
    expect(watcher.drain()).toEqual(["d0/sub/deeper/new.txt"]);
  });
});
