/**
 * A task's event log with its older events in a file (EventSpill): what a subscriber receives
 * is exactly what was appended, in order, from any `afterSeq`, whether the events are still in
 * memory or were moved to the file; a file that cannot be written keeps them in memory.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskEventLog } from "../../core/src/runtime/event-log.js";
import { mountSmallTmpfs } from "../helpers/small-disk.js";
import type { RuntimeEvent, RuntimeEventBody } from "../../core/src/runtime/runtime-events.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-event-log-"));
  dirs.push(dir);
  return dir;
}

/** An event as big as an edit's content: a tool's input of `kb` kilobytes. */
function bigEvent(i: number, kb = 64): RuntimeEventBody {
  return {
    case: "toolStarted",
    value: {
      toolCallId: `call-${i}`,
      tool: "write_to_file",
      summary: `write f${i}`,
      detail: `${i}:` + "x".repeat(kb * 1024),
      messageId: `m${i}`,
    },
  };
}

async function collect(log: TaskEventLog, afterSeq: bigint, until: bigint): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for await (const event of log.subscribe(afterSeq, new AbortController().signal)) {
    out.push(event);
    if (event.seq >= until) break;
  }
  return out;
}

describe("TaskEventLog with a spill file", () => {
  it("keeps a few megabytes in memory and replays every event exactly from any point", async () => {
    const dir = tmpDir();
    const log = new TaskEventLog("t1", 100n, () => {}, 10_000n, { dir, memoryBytes: 512 * 1024 });
    const appended = Array.from({ length: 60 }, (_, i) => log.append(bigEvent(i)));
    const inMemory = log.since(log.lastSeq - 1n);
    expect(inMemory).toHaveLength(1);
    // The older events are not in memory any more: the first batch comes from the file.
    expect(log.since(100n).length).toBeLessThan(60);

    for (const after of [0n, 100n, 101n, 130n, 158n, 159n]) {
      const got = await collect(log, after, log.lastSeq);
      const from = Number((after < 100n ? 100n : after) - 100n);
      expect(got.map((e) => e.seq)).toEqual(appended.slice(from).map((e) => e.seq));
      expect(got).toEqual(appended.slice(from));
    }
    // The file is private to this process: not left in the folder (unlinked once open).
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".spill"))).toEqual([]);
    log.close();
  });

  it("a subscriber reading the file sees live events after it, with no gap", async () => {
    const log = new TaskEventLog("t2", 0n, () => {}, 10_000n, { dir: tmpDir(), memoryBytes: 256 * 1024 });
    for (let i = 0; i < 30; i++) log.append(bigEvent(i));
    const reading = collect(log, 0n, 40n);
    for (let i = 30; i < 40; i++) log.append(bigEvent(i, 1));
    const got = await reading;
    expect(got.map((e) => Number(e.seq))).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(got[3]?.event).toEqual(bigEvent(3));
    log.close();
  });

  it("finds a pending ask that went to the file", () => {
    const log = new TaskEventLog("t3", 0n, () => {}, 10_000n, { dir: tmpDir(), memoryBytes: 128 * 1024 });
    log.append({ case: "ask", value: { askId: "ask-1", kind: "tool_approval", detail: "first" } } as RuntimeEventBody);
    // More than one batch of the file (4 MB) after it: the search goes back through both.
    for (let i = 0; i < 100; i++) log.append(bigEvent(i));
    expect(log.since(0n)[0]?.seq).toBe(1n);
    const found = log.findLast((e) => e.event.case === "ask" && e.event.value.askId === "ask-1");
    expect(found?.seq).toBe(1n);
    expect(log.findLast((e) => e.event.case === "ask" && e.event.value.askId === "none")).toBeUndefined();
    log.close();
  });

  it("keeps every event in memory when the file cannot be written", async () => {
    const dir = tmpDir();
    // A file where the folder should be: the spill file cannot be made.
    const blocked = path.join(dir, "tmp");
    fs.writeFileSync(blocked, "not a folder");
    const failures: Error[] = [];
    const log = new TaskEventLog(
      "t4",
      0n,
      () => {},
      10_000n,
      { dir: blocked, memoryBytes: 128 * 1024 },
      (e) => failures.push(e),
    );
    const appended = Array.from({ length: 40 }, (_, i) => log.append(bigEvent(i)));
    expect(failures.length).toBeGreaterThan(0);
    // Not tried at every event once it failed.
    expect(failures.length).toBeLessThan(10);
    expect(log.since(0n)).toEqual(appended);
    expect(await collect(log, 10n, 40n)).toEqual(appended.slice(10));
    log.close();
  });

  it("never fills the disk: past the free space it leaves alone, events stay in memory", async (ctx) => {
    // A real small file system: a tmpfs, which needs root (as CI and the development machines run).
    const mount = mountSmallTmpfs(16);
    if (!("dir" in mount)) {
      console.log(`spill disk-space test skipped: ${mount.reason}`);
      return ctx.skip();
    }
    try {
      const failures: NodeJS.ErrnoException[] = [];
      const keepFree = 8 * 1024 * 1024;
      const log = new TaskEventLog(
        "t6",
        0n,
        () => {},
        10_000n,
        { dir: path.join(mount.dir, "tmp"), memoryBytes: 512 * 1024, keepFreeBytes: keepFree },
        (e) => failures.push(e),
      );
      // 25 MB of events on a 16 MB disk.
      const appended = Array.from({ length: 400 }, (_, i) => log.append(bigEvent(i)));
      const st = fs.statfsSync(mount.dir);
      expect(st.bavail * st.bsize).toBeGreaterThanOrEqual(keepFree);
      expect(failures.length).toBeGreaterThan(0);
      expect(failures.every((f) => f.code === "ENOSPC")).toBe(true);
      // Some went to the file before it stopped; every event still replays, in order.
      expect(log.since(0n).length).toBeLessThan(400);
      expect(await collect(log, 0n, 400n)).toEqual(appended);
      log.close();
    } finally {
      mount.unmount();
    }
  });

  it("without a spill folder every event stays in memory, as before", () => {
    const log = new TaskEventLog("t5", 5n);
    const appended = Array.from({ length: 50 }, (_, i) => log.append(bigEvent(i)));
    expect(log.since(0n)).toEqual(appended);
    expect(log.since(30n)).toEqual(appended.slice(25));
  });
});

describe("TaskEventLog continuing above another sidecar's seqs", () => {
  it("jumps to above the seq given, reserves again, and replays across the jump from any point", async () => {
    const reserved: bigint[] = [];
    const log = new TaskEventLog("t1", 0n, (upTo) => reserved.push(upTo), 100n, {
      dir: tmpDir(),
      memoryBytes: 512 * 1024,
    });
    for (let i = 0; i < 10; i++) log.append(bigEvent(i));
    log.continueAbove(5n); // below what it handed out already: nothing changes
    expect(log.lastSeq).toBe(10n);
    log.continueAbove(101n); // what a follower may have shown: the reservation
    expect(log.lastSeq).toBe(101n);
    // A subscriber at the jump waits for the next event, it does not spin (nothing was appended).
    const waiting = collect(log, 101n, 102n);
    const after = Array.from({ length: 20 }, (_, i) => log.append(bigEvent(10 + i)));
    expect(after.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => 102n + BigInt(i)));
    expect(reserved).toEqual([101n, 202n]);
    expect((await waiting).map((e) => e.seq)).toEqual([102n]);
    const seqs = [...Array.from({ length: 10 }, (_, i) => BigInt(i + 1)), ...after.map((e) => e.seq)];
    // Some events are in the spill file now: replays read across it and across the jump.
    for (const from of [0n, 4n, 10n, 50n, 101n, 102n, 110n]) {
      const got = await collect(log, from, log.lastSeq);
      expect(got.map((e) => e.seq)).toEqual(seqs.filter((s) => s > from));
    }
  });
});
