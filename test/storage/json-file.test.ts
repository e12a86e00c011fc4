import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readJsonRecord } from "../../core/src/storage/json-file.js";
import { tempLayout } from "./helpers.js";

describe("readJsonRecord", () => {
  it("reads a small file without a turn of the event loop, and tells missing, malformed and ok apart", async () => {
    const { base } = tempLayout();
    const file = path.join(base, "settings.json");
    let turned = false;
    setImmediate(() => (turned = true));
    expect(await readJsonRecord(file)).toEqual({ kind: "missing" });
    fs.writeFileSync(file, "[1, 2]");
    expect(await readJsonRecord(file)).toEqual({ kind: "malformed" });
    fs.writeFileSync(file, '{"checkpointsEnabled": false}');
    expect(await readJsonRecord(file)).toEqual({ kind: "ok", value: { checkpointsEnabled: false } });
    expect(turned).toBe(false);
  });

  it("a named pipe in a file's place is read without holding up the event loop, until its writer ends", async () => {
    const { base } = tempLayout();
    const fifo = path.join(base, "settings.json");
    execFileSync("mkfifo", [fifo]);
    const reading = readJsonRecord(fifo);
    // A synchronous read would wait here for a writer that never comes (this thread is the writer).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const writer = fs.openSync(fifo, "w");
    fs.writeSync(writer, '{"a": 1}');
    fs.closeSync(writer);
    expect(await reading).toEqual({ kind: "ok", value: { a: 1 } });
  });
});
