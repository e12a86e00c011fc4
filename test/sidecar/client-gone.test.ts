/**
 * An editor that goes away in the middle of a stream (quit, crash) is normal, not a failure:
 * the sidecar's log records no warning for the streams it was writing to, against the real
 * dist/dline-core.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";

const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe("a client that goes away mid-stream", () => {
  it("leaves no warning in the log while changes keep coming to its abandoned streams", async () => {
    const sidecar = await startSidecar();
    running.push(sidecar);
    const { clients, roots } = sidecar;
    await clients.history.listTasks({});
    const aborts: AbortController[] = [];
    const streams = Array.from({ length: 20 }, async () => {
      const abort = new AbortController();
      aborts.push(abort);
      try {
        for await (const _ of clients.history.watchHistory({}, { signal: abort.signal })) {
          // each change is written to every open stream
        }
      } catch {
        // the abort below
      }
    });
    // Streams up and receiving: a change reaches them.
    await clients.settings.upsertProfile({
      profile: { id: "p0", name: "p0", provider: "openai", baseUrl: "http://127.0.0.1:9", model: "m" },
    });
    await new Promise((r) => setTimeout(r, 300));
    const { taskId } = await clients.tasks
      .newTask({ workspaceRoot: roots.base, text: "a task", profileId: "p0" })
      .catch(() => ({ taskId: "" }));
    // Every stream's connection closed at once while favourites keep changing the history.
    const changes = (async () => {
      for (let i = 0; i < 40; i++) await clients.history.setFavorite({ taskId, favorite: i % 2 === 0 }).catch(() => {});
    })();
    for (const abort of aborts) abort.abort();
    await Promise.all(streams);
    await changes;
    await sidecar.stop();
    const log = fs.readFileSync(path.join(roots.homeDir, "logs", "dline-core.log"), "utf8");
    expect(log.split("\n").filter((l) => l.includes('"level":"warn"') || l.includes('"level":"error"'))).toEqual([]);
  });
});
