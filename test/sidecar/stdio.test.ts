import { spawn } from "node:child_process";
import * as path from "node:path";
import * as esbuild from "esbuild";
import { describe, expect, it } from "vitest";
import * as os from "node:os";
import * as fs from "node:fs";

// The handshake line and the log's stderr copy are written with writeToStdio (plain synchronous
// writes). A reader that is slow to drain the pipe must still get every byte, in order, whether
// the pipe blocks the writer or answers EAGAIN (a non-blocking pipe), where later lines must not
// overtake the refused rest queued in process.stdout.

async function buildWriter(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-stdio-"));
  const outfile = path.join(dir, "stdio-writer.cjs");
  await esbuild.build({
    entryPoints: [path.join(__dirname, "children/stdio-writer.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "warning",
  });
  return outfile;
}

async function runSlowlyRead(
  file: string,
  mode: string,
  count: number,
): Promise<{ out: string; err: string; code: number | null }> {
  const child = spawn(process.execPath, [file, mode, String(count)], { stdio: ["ignore", "pipe", "pipe"] });
  // Let the pipe fill before reading: the writer has to wait (or queue) for the reader.
  child.stdout.pause();
  await new Promise((r) => setTimeout(r, 200));
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { out, err, code };
}

describe("writeToStdio", () => {
  it("delivers every line in order through a full pipe, blocking or not", async () => {
    const file = await buildWriter();
    const count = 5000; // about 540 KB: several times a pipe's buffer
    for (const mode of ["blocking", "nonblocking"]) {
      const { out, err, code } = await runSlowlyRead(file, mode, count);
      expect(code, mode).toBe(0);
      const lines = out.split("\n").filter(Boolean);
      expect(lines.length, mode).toBe(count);
      lines.forEach((line, i) => expect(line.startsWith(`out ${i} `), `${mode}: line ${i}`).toBe(true));
      const errLines = err.split("\n").filter(Boolean);
      // The non-blocking pipe did refuse writes, so the queue path ran.
      expect(errLines.at(-1), mode).toBe(`queued ${mode === "nonblocking"}`);
      expect(errLines.slice(0, -1), mode).toEqual(Array.from({ length: count / 100 }, (_, i) => `err ${i * 100}`));
    }
  });
});
