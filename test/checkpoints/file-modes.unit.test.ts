import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  FileModes,
  MAX_RECORDED_MODES,
  modesIn,
  narrowToRecorded,
  recordableMode,
  restoredPermissions,
} from "../../core/src/checkpoints/file-modes.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function workspace(): string {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "dline-file-modes-"));
  made.push(ws);
  return ws;
}
function fileWithMode(ws: string, rel: string, mode: number): fs.Stats {
  fs.writeFileSync(path.join(ws, rel), "x\n");
  fs.chmodSync(path.join(ws, rel), mode);
  return fs.lstatSync(path.join(ws, rel));
}

describe("which files' bits a checkpoint records", () => {
  it("those that git's 644 or 755 would open up, and no others", () => {
    const ws = workspace();
    const recorded = (mode: number) => recordableMode(fileWithMode(ws, "f", mode))?.toString(8);
    expect([0o600, 0o400, 0o640, 0o444, 0o700, 0o750, 0o744, 0o711].map(recorded)).toEqual([
      "600",
      "400",
      "640",
      "444",
      "700",
      "750",
      "744",
      "711",
    ]);
    // As open as git's bits, or more: a restore without a record is no more open than they were.
    expect([0o644, 0o755, 0o664, 0o666, 0o775, 0o777, 0o4755].map(recorded)).toEqual(Array(7).fill(undefined));
    fs.symlinkSync("f", path.join(ws, "link"));
    expect(recordableMode(fs.lstatSync(path.join(ws, "link")))).toBeUndefined();
    expect(recordableMode(fs.lstatSync(ws))).toBeUndefined();
  });
});

describe("the bits a restore gives a file it writes", () => {
  it("a file gone gets those recorded, with the snapshot's executable bit; nothing recorded: the umask's", () => {
    expect(restoredPermissions(undefined, 0o600, false)).toBe(0o600);
    expect(restoredPermissions(undefined, 0o700, true)).toBe(0o700);
    expect(restoredPermissions(undefined, 0o700, false)).toBe(0o600);
    expect(restoredPermissions(undefined, 0o600, true)).toBe(0o700);
    expect(restoredPermissions(undefined, undefined, false)).toBeUndefined();
  });

  it("a file there is never made more open than it is now, nor than it was when recorded", () => {
    for (let now = 0; now <= 0o777; now += 0o11)
      for (const then of [undefined, 0o600, 0o640, 0o400, 0o700]) {
        const bits = restoredPermissions(now, then, false)!;
        expect(bits & ~now & 0o666).toBe(0);
        if (then !== undefined) expect(bits & ~then).toBe(0);
      }
  });
});

describe("narrowing the recorded files a restore did not write", () => {
  it("takes away the bits gained since, never adds any, skips what the restore wrote, and never follows a link to a folder", () => {
    const ws = workspace();
    const outside = workspace();
    fs.mkdirSync(path.join(ws, "keys"));
    fileWithMode(ws, "keys/opened.key", 0o644);
    fileWithMode(ws, "keys/tighter.key", 0o400);
    fileWithMode(ws, "keys/written.key", 0o644);
    fileWithMode(outside, "id.key", 0o644);
    fs.symlinkSync(outside, path.join(ws, "linked"));
    const record = {
      "keys/opened.key": "600",
      "keys/tighter.key": "600",
      "keys/written.key": "600",
      "keys/gone.key": "600",
      "linked/id.key": "600",
      "../outside.key": "600",
    };
    expect(narrowToRecorded(ws, record, new Set(["keys/written.key"]))).toEqual(["keys/opened.key"]);
    const mode = (abs: string) => (fs.lstatSync(abs).mode & 0o777).toString(8);
    expect(mode(path.join(ws, "keys/opened.key"))).toBe("600");
    expect(mode(path.join(ws, "keys/tighter.key"))).toBe("400");
    expect(mode(path.join(ws, "keys/written.key"))).toBe("644");
    expect(mode(path.join(outside, "id.key"))).toBe("644");
    expect(narrowToRecorded(ws, undefined, new Set())).toEqual([]);
  });
});

describe("the record in a commit message", () => {
  it("is read from a checkpoint's record or the line a snapshot after a restore carries; anything else is not a record", () => {
    const meta = { v: 1, task: "t", modes: { "a.key": "600", "b.sh": "700" } };
    expect(modesIn(`Dline checkpoint: turn\n\n${JSON.stringify(meta)}\n\nDline-Task: t\n`)).toEqual(meta.modes);
    expect(modesIn(`Dline snapshot after restoring x\n\n{"modes":{}}\n`)).toEqual({});
    expect(modesIn(`Dline checkpoint: turn\n\n{"v":1,"task":"t"}\n`)).toBeUndefined();
    expect(modesIn("Dline snapshot after restoring x\n")).toBeUndefined();
    expect(modesIn('x\n\n{"modes":{"a":"999","b":600,"c":"0600","d":"640"}}\n')).toEqual({ d: "640" });
    expect(modesIn('x\n\n{"modes":["a"]}\n')).toBeUndefined();
  });
});

describe("what one process's saves record", () => {
  it("files as they are at each save: one gone or opened up since leaves the record; past the cap a new file is not recorded", async () => {
    const ws = workspace();
    fileWithMode(ws, "a.key", 0o600);
    fileWithMode(ws, "b.key", 0o600);
    const modes = new FileModes(ws);
    modes.adopt({ "a.key": "600", "gone.key": "600", "bad.key": "99" });
    await modes.look(["b.key"]);
    expect(modes.record()).toEqual({ "a.key": "600", "b.key": "600" });
    fs.chmodSync(path.join(ws, "a.key"), 0o644);
    fs.chmodSync(path.join(ws, "b.key"), 0o640);
    expect(modes.record()).toEqual({ "b.key": "640" });

    const many = Array.from({ length: MAX_RECORDED_MODES + 5 }, (_, i) => `k${String(i).padStart(3, "0")}`);
    modes.learn(many, new Map(many.map((p) => [p, 0o600])));
    const record = modes.record();
    // Their files are not there: a record holds files as they are.
    expect(record).toEqual({ "b.key": "640" });
    for (const p of many) fileWithMode(ws, p, 0o600);
    modes.learn(many, new Map(many.map((p) => [p, 0o600])));
    expect(Object.keys(modes.record())).toHaveLength(MAX_RECORDED_MODES);
    expect(modes.record()["b.key"]).toBe("640");
  });
});
