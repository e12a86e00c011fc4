import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CheckpointManager } from "../../core/src/checkpoints/index.js";
import { silentLogger } from "../../core/src/logging/logger.js";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { freeBytes, mountSmallTmpfs } from "../helpers/small-disk.js";
import { bundleFixture } from "./driver-process.js";
import { makeSandbox, treeDigest, write, type Sandbox } from "./helpers.js";

/**
 * A save that runs out of room in the checkpoints' file system part-way (the documents root on a
 * small disk, the workspace elsewhere): what it wrote and nothing references goes, so the disk is
 * not left full; every other checkpoint, pre-image and older object stays, and so does a
 * temporary pack file of a repack another process runs meanwhile; the person's files are not
 * touched; once there is room, the same save works.
 */
const MiB = 1024 * 1024;
const mount = mountSmallTmpfs(12);
const mounted = "dir" in mount ? mount : undefined;
afterAll(() => mounted?.unmount());

/** Every file in the repository's objects folder (loose objects, packs, temporary files), sorted. */
function objectFiles(gitDir: string): string[] {
  const dir = path.join(gitDir, "objects");
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((rel) => !rel.startsWith("info") && fs.statSync(path.join(dir, rel)).isFile())
    .sort();
}

function digest(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** The person's other files on the checkpoints' disk: a file that leaves `free` bytes free. */
function othersLeaving(dir: string, free: number): string {
  const file = path.join(dir, "others.bin");
  fs.writeFileSync(file, Buffer.alloc(Math.max(0, freeBytes(dir) - free), 3));
  return file;
}

/** A manager whose documents root (the checkpoints) is `docsRoot`. */
function managerOn(sb: Sandbox, docsRoot: string): { manager: CheckpointManager; gitDir: string } {
  const layout = new InstanceLayout({
    dataRoot: path.join(sb.base, "data"),
    homeRoot: path.join(sb.base, "dline-home"),
    documentsRoot: docsRoot,
  });
  const manager = new CheckpointManager({ layout, env: sb.env, homeDir: sb.home, logger: silentLogger() });
  return { manager, gitDir: path.join(layout.checkpointRepoDir(sb.workspace), ".git") };
}

function shadowGit(sb: Sandbox, gitDir: string, args: string[], input?: string): string {
  return execFileSync("git", [`--git-dir=${gitDir}`, `--work-tree=${sb.workspace}`, ...args], {
    env: { PATH: process.env.PATH, HOME: sb.home, GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8",
    input,
  });
}

/** What the checkpoints' status says of a save git could not write (before: git's own words, "fatal: unable to write loose object file: No space left on device"). */
const NO_SPACE = /^The disk is full\.$/;

describe.skipIf(!mounted)(
  `saves on a full disk ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`,
  () => {
    let disk = "";
    beforeAll(() => {
      disk = fs.mkdtempSync(path.join(mounted!.dir, "t-"));
    });
    /** What a test leaves to undo (its manager stopped, its folder on the small disk removed). */
    const cleanups: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const undo of cleanups.splice(0).reverse()) await undo();
    });
    /** A folder of the small disk, and a manager whose checkpoints are in it. */
    function onDisk(sb: Sandbox, name: string) {
      const dir = fs.mkdtempSync(path.join(disk, `${name}-`));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const { manager, gitDir } = managerOn(sb, path.join(dir, "docs"));
      cleanups.push(() => manager.stop());
      return { dir, manager, gitDir };
    }

    it.each([
      { shape: "8 files of 1 MiB (loose objects)", files: 8, size: MiB },
      { shape: "600 files of 14 KiB (a pack of git's bulk check-in)", files: 600, size: 14 * 1024 },
    ])(
      "a first baseline of $shape leaves nothing of its own behind, touches nothing of the person's, and works once there is room",
      async ({ files, size }) => {
        const sb = makeSandbox();
        const names = Array.from({ length: files }, (_, i) => `src/f${i}.txt`);
        for (const name of names) write(sb.workspace, name, randomBytes(size));
        const workspaceBefore = treeDigest(sb.workspace);
        const { dir, manager, gitDir } = onDisk(sb, "base");
        const task = { id: "t1", workspaceRoots: [sb.workspace] };
        // Half the workspace's bytes fit.
        const others = othersLeaving(dir, (files * size) / 2);
        const othersDigest = digest(others);
        const freeBefore = freeBytes(dir);

        expect(await manager.ensureBaseline(task)).toBeUndefined();
        const failed = await manager.status({ workspaceRoot: sb.workspace });
        expect(failed.state).toBe("failed");
        expect(failed.message).toMatch(NO_SPACE);
        await manager.idle();
        expect(objectFiles(gitDir)).toEqual([]);
        // The repository's own few files (config, HEAD, the index): not the workspace's bytes.
        expect(freeBytes(dir)).toBeGreaterThan(freeBefore - 256 * 1024);
        expect(treeDigest(sb.workspace)).toEqual(workspaceBefore);
        expect(digest(others)).toBe(othersDigest);

        fs.rmSync(others);
        expect((await manager.retry({ workspaceRoot: sb.workspace })).state).toBe("ready");
        const base = await manager.ensureBaseline(task);
        expect(base?.kind).toBe("baseline");
        expect(shadowGit(sb, gitDir, ["ls-tree", "-r", "--name-only", base!.id]).split("\n").filter(Boolean)).toEqual(
          [...names].sort(),
        );
        expect((await manager.compare("t1", base!.id)).files).toEqual([]);
        expect(treeDigest(sb.workspace)).toEqual(workspaceBefore);
      },
    );

    it("a later save keeps every earlier checkpoint, pre-image and older object, and removes what it wrote", async () => {
      const sb = makeSandbox();
      write(sb.workspace, "a.txt", "one\n");
      write(sb.workspace, ".gitignore", "notes/\n");
      write(sb.workspace, "notes/n.txt", "the person's note\n");
      const { dir, manager, gitDir } = onDisk(sb, "later");
      const task = { id: "t1", workspaceRoots: [sb.workspace] };
      const base = (await manager.ensureBaseline(task))!;
      // An ignored file a tool changes: its pre-image is kept apart from the checkpoints.
      await manager.beforeEdit(task, ["notes/n.txt"]);
      write(sb.workspace, "notes/n.txt", "the tool's note\n");
      write(sb.workspace, "a.txt", "two\n");
      const turn = (await manager.saveTurn(task, { editedPaths: ["notes/n.txt", "a.txt"] }))!;
      // What a deleted task's checkpoints left, written before this save: the next garbage collection's.
      const old = shadowGit(sb, gitDir, ["hash-object", "-w", "--stdin"], "what a deleted task saved\n").trim();
      const oldFile = path.join(gitDir, "objects", old.slice(0, 2), old.slice(2));
      fs.utimesSync(oldFile, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
      await manager.idle();
      const objectsBefore = objectFiles(gitDir);
      expect(objectsBefore).toContain(path.join(old.slice(0, 2), old.slice(2)));

      // A command makes 4 MiB of files where 2 fit.
      const others = othersLeaving(dir, 2 * MiB);
      const freeBefore = freeBytes(dir);
      for (let i = 1; i <= 4; i++) write(sb.workspace, `big/b${i}.txt`, randomBytes(MiB));
      const workspaceBefore = treeDigest(sb.workspace);
      expect(await manager.saveTurn(task, { commandRan: true })).toBeUndefined();
      expect((await manager.status({ workspaceRoot: sb.workspace })).message).toMatch(NO_SPACE);
      await manager.idle();
      expect(objectFiles(gitDir)).toEqual(objectsBefore);
      expect(freeBytes(dir)).toBeGreaterThan(freeBefore - 256 * 1024);
      expect(treeDigest(sb.workspace)).toEqual(workspaceBefore);
      shadowGit(sb, gitDir, ["fsck", "--connectivity-only", "--no-dangling"]);

      fs.rmSync(others);
      const after = (await manager.saveTurn(task, { commandRan: true }))!;
      expect(after.kind).toBe("turn");
      const changes = (await manager.compare("t1", base.id)).files;
      expect(changes.map((c) => c.path).sort()).toEqual([
        "a.txt",
        ...Array.from({ length: 4 }, (_, i) => `big/b${i + 1}.txt`),
        "notes/n.txt",
      ]);
      // The pre-image is what the baseline's compare shows as the note before the task.
      expect(changes.find((c) => c.path === "notes/n.txt")?.before).toBe("the person's note\n");
      expect((await manager.compare("t1", turn.id)).files.map((c) => c.path).sort()).toEqual(
        Array.from({ length: 4 }, (_, i) => `big/b${i + 1}.txt`),
      );
    });

    it("leaves the temporary pack file of a repack another process runs meanwhile", async () => {
      const holderScript = await bundleFixture("packing-holder");
      const sb = makeSandbox();
      write(sb.workspace, "a.txt", "one\n");
      const { dir, manager, gitDir } = onDisk(sb, "packing");
      const task = { id: "t1", workspaceRoots: [sb.workspace] };
      await manager.ensureBaseline(task);
      await manager.idle();
      const objectsBefore = objectFiles(gitDir);

      const repacking = path.join(gitDir, "objects", "pack", "tmp_pack_Rp4ck1");
      const holder = spawn(process.execPath, [holderScript, path.join(path.dirname(gitDir), "packing"), repacking], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const exited = new Promise((resolve) => holder.on("close", resolve));
      try {
        await new Promise<void>((resolve, reject) => {
          holder.stdout.on("data", (b: Buffer) => b.toString().includes("holding") && resolve());
          holder.on("close", (code) => reject(new Error(`the packing holder ended (${code})`)));
        });
        othersLeaving(dir, 2 * MiB);
        for (let i = 1; i <= 4; i++) write(sb.workspace, `big/b${i}.txt`, randomBytes(MiB));
        // Being written as the save starts.
        fs.utimesSync(repacking, new Date(), new Date());
        expect(await manager.saveTurn(task, { commandRan: true })).toBeUndefined();
        expect((await manager.status({ workspaceRoot: sb.workspace })).message).toMatch(NO_SPACE);
        expect(objectFiles(gitDir)).toEqual([...objectsBefore, path.join("pack", "tmp_pack_Rp4ck1")].sort());
        expect(fs.readFileSync(repacking)).toEqual(Buffer.alloc(64 * 1024, 7));
      } finally {
        holder.kill("SIGKILL");
        await exited;
      }
      // Its packing was stopped: what it left goes with the next failed save's own leftovers.
      fs.utimesSync(repacking, new Date(), new Date());
      expect(await manager.saveTurn(task, { commandRan: true })).toBeUndefined();
      expect(objectFiles(gitDir)).toEqual(objectsBefore);
    });
  },
);
