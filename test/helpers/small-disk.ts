/**
 * A small real file system for disk-full tests: a tmpfs of a few MiB, mounted for the test
 * (this needs root, as CI and the development machines run: callers skip with the reason
 * otherwise), and a filler that writes until ENOSPC.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { TestRoots } from "./sidecar.js";

/** Mounts a tmpfs of `mb` MiB at a fresh folder; undefined (with the reason) when mounting is not permitted. */
export function mountSmallTmpfs(mb: number): { dir: string; unmount(): void } | { reason: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-diskfull-"));
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${mb}m,mode=0755`, "tmpfs", dir], {
    encoding: "utf8",
  });
  if (mounted.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return {
      reason: `cannot mount a tmpfs here (${(mounted.stderr || mounted.error?.message || "").trim()}); run as root`,
    };
  }
  return {
    dir,
    unmount() {
      spawnSync("umount", ["-l", dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bytes left for an unprivileged writer on the file system of `dir`. */
export function freeBytes(dir: string): number {
  const st = fs.statfsSync(dir);
  return st.bavail * st.bsize;
}

/** Writes a file until the file system is full; answers its path. */
export function fillDisk(dir: string): string {
  const filler = path.join(dir, "filler.bin");
  const fd = fs.openSync(filler, "w");
  const block = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
    // Fill the last bytes too.
    try {
      for (;;) fs.writeSync(fd, block.subarray(0, 512));
    } catch {
      // full
    }
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

/** The three roots on the small file system; the test's own files (the sidecar's stderr) beside it. */
export function rootsOn(dir: string): TestRoots {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-diskfull-"));
  const home = path.join(base, "home");
  fs.mkdirSync(home, { recursive: true });
  const roots: TestRoots = {
    base,
    home,
    dlineDir: path.join(dir, "dline"),
    homeDir: path.join(dir, "dline-home"),
    docsDir: path.join(dir, "docs"),
    env: {},
  };
  roots.env = {
    PATH: process.env.PATH,
    HOME: home,
    DLINE_DIR: roots.dlineDir,
    DLINE_HOME_DIR: roots.homeDir,
    DLINE_DOCS_DIR: roots.docsDir,
    TMPDIR: os.tmpdir(),
  };
  return roots;
}
