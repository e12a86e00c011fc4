/**
 * The seqs a process reserves for a task it shows without holding it (runtime/shown-seqs.ts):
 * one file per process, read by whoever takes the task next; a process that ended is forgotten
 * once the holder's own reservation is above it.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ShownSeqs } from "../../core/src/runtime/shown-seqs.js";

function dir(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), "dline-shown-")), "seqs-shown");
}

/** A pid no process can have: above Linux's highest (PID_MAX_LIMIT, 2^22). */
const NO_PROCESS = 4_194_305;

describe("seqs shown by processes that do not hold the task", () => {
  it("are none before any process reserved some", () => {
    expect(new ShownSeqs(dir()).highest()).toBe(0n);
  });

  it("give the highest reservation of all processes, or of the others only", () => {
    const at = dir();
    const mine = new ShownSeqs(at, 100);
    mine.reserve(30_001n);
    new ShownSeqs(at, 200).reserve(20_001n);
    expect(mine.highest()).toBe(30_001n);
    expect(mine.highest({ others: true })).toBe(20_001n);
    // A later reservation of the same process replaces its earlier one.
    mine.reserve(40_001n);
    expect(new ShownSeqs(at, 300).highest()).toBe(40_001n);
  });

  it("leave out a file that is not a reservation, and keep it", () => {
    const at = dir();
    new ShownSeqs(at, 100).reserve(5n);
    fs.writeFileSync(path.join(at, "200"), "not a number");
    fs.writeFileSync(path.join(at, "300.tmp"), "99");
    expect(new ShownSeqs(at, 400).highest()).toBe(5n);
    expect(fs.readFileSync(path.join(at, "200"), "utf8")).toBe("not a number");
  });

  it("of a process that ended go once the holder reserved above them; a live process's stay", () => {
    const at = dir();
    const ended = NO_PROCESS;
    new ShownSeqs(at, ended).reserve(20_001n);
    new ShownSeqs(at, process.ppid).reserve(20_002n);
    const holder = new ShownSeqs(at, process.pid);
    holder.removeEnded(20_000n);
    expect(fs.readdirSync(at).sort()).toEqual([String(ended), String(process.ppid)].sort());
    holder.removeEnded(30_001n);
    expect(fs.readdirSync(at)).toEqual([String(process.ppid)]);
  });

  it("of a task whose folder is gone are refused, and the folder is not made again", () => {
    const at = dir();
    const taskFolder = path.dirname(at);
    fs.rmSync(taskFolder, { recursive: true });
    expect(() => new ShownSeqs(at, 100).reserve(7n)).toThrow(/ENOENT/);
    expect(fs.existsSync(taskFolder)).toBe(false);
  });
});
