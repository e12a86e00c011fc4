/**
 * Soak (short mode): two sidecars over the same roots and workspace run random operations
 * (tasks with the scripted model server, profile upserts, favourites, deletions, restores)
 * while a chaos loop SIGKILLs and restarts them. Afterwards: every database opens and passes
 * its integrity check, no acknowledged write is lost, the history equals the task folders, no
 * checkpoint refs of deleted tasks remain, and the project's own .git is untouched.
 * Bounded in time and count; loopback only.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import * as os from "node:os";
import { makeTestRoots, startSidecar, type RunningSidecar, type TestRoots } from "../helpers/sidecar.js";
import { fillDisk, mountSmallTmpfs } from "../helpers/small-disk.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { nth } from "../helpers/items.js";

const SOAK_MS = Number(process.env.DLINE_SOAK_MS ?? 40_000);
const MAX_OPS = Number(process.env.DLINE_SOAK_OPS ?? 150);

function digestTree(dir: string): string {
  const hash = createHash("sha256");
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      hash.update(path.relative(dir, p));
      if (st.isDirectory()) walk(p);
      else hash.update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return hash.digest("hex");
}

let server: ModelServerProcess | undefined;
const running = new Set<RunningSidecar>();
const unmounts: (() => void)[] = [];
afterAll(async () => {
  // First (a lazy unmount detaches it at once): the small disk never outlives the file.
  for (const unmount of unmounts) unmount();
  await Promise.all([...running].map((s) => s.stop().catch(() => {})));
  await server?.stop();
}, 60_000);

/** Opens every task database of the roots read-write (recovering a WAL) and answers how many passed integrity_check. */
function checkDatabases(tasksDir: string, ids: string[]): number {
  let databases = 0;
  const check = (file: string) => {
    if (!fs.existsSync(file)) return;
    let result: unknown;
    try {
      const db = new Database(file, { fileMustExist: true });
      result = db.pragma("integrity_check", { simple: true });
      db.close();
    } catch (err) {
      // Name the file and SQLite's extended code (SQLITE_IOERR_SHMSIZE on a disk still full, say).
      throw new Error(`${file}: ${(err as { code?: string }).code ?? ""} ${(err as Error).message}`, { cause: err });
    }
    expect(result, file).toBe("ok");
    databases++;
  };
  check(path.join(tasksDir, "taskHistory.db"));
  for (const id of ids)
    for (const f of ["messages.db", "journal.db", "metrics.db", "activities.db"]) check(path.join(tasksDir, id, f));
  return databases;
}

describe("soak", () => {
  it(
    "random operations on two sidecars under SIGKILLs lose nothing acknowledged",
    { timeout: SOAK_MS + 120_000 },
    async () => {
      const roots = makeTestRoots("dline-soak-");
      const workspace = makeWorkspace(roots.base);
      execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qam", "init", "--allow-empty"], {
        cwd: workspace,
      });
      const projectGit = digestTree(path.join(workspace, ".git"));
      // Every task: write its own file, then complete.
      server = await spawnModelServer({
        apiKey: TEST_KEY,
        loop: true,
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "soak/out.txt", content: "soak\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
        ],
      });
      const slots: (RunningSidecar | undefined)[] = [undefined, undefined];
      const start = async (i: number) => {
        const s = await startSidecar({ roots });
        running.add(s);
        slots[i] = s;
        return s;
      };
      const first = await start(0);
      await start(1);
      await first.clients.settings.upsertProfile({
        profile: {
          id: "soak",
          name: "soak",
          provider: "openai",
          baseUrl: server.url,
          model: "m",
          contextWindow: 100_000n,
        },
      });
      await first.clients.settings.setSecret({ profileId: "soak", name: "api_key", value: TEST_KEY });
      await first.clients.settings.updateSettings({
        scope: 1,
        patch: { autoApprovalSettings: { enabled: true, editFiles: true, maxRequests: 1000 } },
      });

      const ackedProfiles = new Set<string>();
      const ackedTasks = new Set<string>();
      const deletedTasks = new Set<string>();
      // A deletion whose answer was lost to a kill may still complete (it is journaled and
      // finished on the next start): such a task may or may not remain.
      const deleteAttempted = new Set<string>();
      const ackedFavorites = new Map<string, boolean>();
      let ops = 0;
      let kills = 0;
      let failures = 0;
      const deadline = Date.now() + SOAK_MS;

      const chaos = (async () => {
        while (Date.now() < deadline && ops < MAX_OPS) {
          await new Promise((r) => setTimeout(r, 2500));
          const i = kills % 2;
          const victim = slots[i];
          if (!victim) continue;
          slots[i] = undefined;
          victim.process.child.kill("SIGKILL");
          await victim.process.exited;
          running.delete(victim);
          kills++;
          await start(i);
        }
      })();

      const worker = async (i: number) => {
        let n = 0;
        while (Date.now() < deadline && ops < MAX_OPS) {
          const s = slots[i];
          if (!s) {
            await new Promise((r) => setTimeout(r, 100));
            continue;
          }
          const op = ops++ % 5;
          n++;
          try {
            if (op === 0) {
              const id = `soak-${i}-${n}`;
              await s.clients.settings.upsertProfile({
                profile: { id, name: id, provider: "openai", baseUrl: "http://127.0.0.1:9", model: "m" },
              });
              ackedProfiles.add(id);
            } else if (op === 1) {
              const { taskId } = await s.clients.tasks.newTask({
                workspaceRoot: workspace,
                text: `soak task ${i}-${n}`,
                profileId: "soak",
              });
              ackedTasks.add(taskId);
            } else if (op === 2 && ackedTasks.size > 0) {
              const ids = [...ackedTasks].filter((t) => !deletedTasks.has(t));
              const id = ids[n % Math.max(1, ids.length)];
              if (id) {
                const favorite = n % 2 === 0;
                await s.clients.history.setFavorite({ taskId: id, favorite });
                ackedFavorites.set(id, favorite);
              }
            } else if (op === 3 && ackedTasks.size > 3) {
              const ids = [...ackedTasks].filter((t) => !deleteAttempted.has(t));
              const id = ids[0];
              if (id) {
                deleteAttempted.add(id);
                await s.clients.tasks.deleteTasks({ taskIds: [id], mode: 1 });
                deletedTasks.add(id);
                ackedFavorites.delete(id);
              }
            } else if (op === 4 && ackedTasks.size > 0) {
              const ids = [...ackedTasks].filter((t) => !deletedTasks.has(t));
              const id = ids[ids.length - 1];
              const { checkpoints } = await s.clients.checkpoints.listCheckpoints({ taskId: id });
              if (checkpoints.length > 0)
                await s.clients.checkpoints.restore({
                  taskId: id,
                  checkpointId: nth(checkpoints, 0, "checkpoint").id,
                  mode: 2,
                });
            }
          } catch {
            // A sidecar killed under a request, or a task owned by the other one: not acknowledged.
            failures++;
          }
        }
      };
      await Promise.all([worker(0), worker(1), chaos]);

      // Quiesce: stop both, start one clean sidecar (it runs recovery), let running tasks settle.
      for (const s of slots) if (s) await s.stop();
      const final = await startSidecar({ roots });
      running.add(final);
      await new Promise((r) => setTimeout(r, 1000));

      // No acknowledged write lost.
      const profiles = new Set((await final.clients.settings.listProfiles({})).profiles.map((p) => p.id));
      for (const id of ackedProfiles) expect(profiles.has(id), `profile ${id}`).toBe(true);
      const listed = new Map<string, boolean>();
      for (let token = ""; ;) {
        const page = await final.clients.history.listTasks({ pageSize: 200, pageToken: token });
        for (const t of page.tasks) listed.set(t.id, t.favorite);
        if (!page.nextPageToken) break;
        token = page.nextPageToken;
      }
      for (const id of ackedTasks) {
        if (deleteAttempted.has(id) && !deletedTasks.has(id)) continue;
        expect(listed.has(id), `task ${id}`).toBe(!deletedTasks.has(id));
      }
      for (const [id, favorite] of ackedFavorites)
        if (listed.has(id)) expect(listed.get(id), `favourite of ${id}`).toBe(favorite);

      // History equals the task folders.
      const tasksDir = path.join(roots.docsDir, "tasks");
      const folders = fs
        .readdirSync(tasksDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && !d.name.startsWith(".") && !d.name.endsWith(".lock"))
        .map((d) => d.name)
        .sort();
      expect(folders).toEqual([...listed.keys()].sort());

      // Every database opens and passes its integrity check.
      let databases = 0;
      const check = (file: string) => {
        if (!fs.existsSync(file)) return;
        // Opened as the product opens it (read-write): a WAL left by a killed writer needs
        // recovery on open, which a read-only connection refuses ("readonly database").
        const db = new Database(file, { fileMustExist: true });
        expect(db.pragma("integrity_check", { simple: true }), file).toBe("ok");
        db.close();
        databases++;
      };
      check(path.join(tasksDir, "taskHistory.db"));
      for (const id of folders)
        for (const f of ["messages.db", "journal.db", "metrics.db", "activities.db"]) check(path.join(tasksDir, id, f));

      // No checkpoint refs of deleted tasks remain; the project's own .git is untouched.
      const checkpointsDir = path.join(roots.docsDir, "checkpoints");
      if (fs.existsSync(checkpointsDir)) {
        for (const repo of fs.readdirSync(checkpointsDir)) {
          const gitDir = path.join(checkpointsDir, repo, ".git");
          if (!fs.existsSync(gitDir)) continue;
          const refs = execFileSync("git", ["--git-dir", gitDir, "for-each-ref", "--format=%(refname)"]).toString();
          for (const id of deletedTasks) expect(refs).not.toContain(`/${id}/`);
        }
      }
      expect(digestTree(path.join(workspace, ".git"))).toBe(projectGit);
      console.log(
        `soak: ${ops} operations, ${kills} kills, ${failures} unacknowledged, ${ackedTasks.size} tasks (${deletedTasks.size} deleted), ` +
          `${ackedProfiles.size} profiles, ${databases} databases checked, lost: 0`,
      );
    },
  );

  const disk = mountSmallTmpfs(24);
  if ("unmount" in disk) unmounts.push(disk.unmount);
  it.skipIf(!("dir" in disk))(
    `a disk that fills up under two sidecars running tasks: no crash, no damaged database, nothing acknowledged lost${"reason" in disk ? ` (skipped: ${disk.reason})` : ""}`,
    { timeout: 180_000 },
    async () => {
      const dir = (disk as { dir: string; unmount(): void }).dir;
      // The roots on the small disk; the test's own files (stderr) and the workspace beside it.
      const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-soak-full-"));
      const roots: TestRoots = {
        base,
        home: path.join(base, "home"),
        dlineDir: path.join(dir, "dline"),
        homeDir: path.join(dir, "dline-home"),
        docsDir: path.join(dir, "docs"),
        env: {},
      };
      fs.mkdirSync(roots.home);
      roots.env = {
        PATH: process.env.PATH,
        HOME: roots.home,
        DLINE_DIR: roots.dlineDir,
        DLINE_HOME_DIR: roots.homeDir,
        DLINE_DOCS_DIR: roots.docsDir,
        TMPDIR: os.tmpdir(),
      };
      const workspace = makeWorkspace(base);
      const model = await spawnModelServer({
        apiKey: TEST_KEY,
        loop: true,
        turns: [
          {
            text: "working ".repeat(200),
            toolCalls: [{ name: "write_to_file", input: { path: "soak/out.txt", content: "soak\n" } }],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
        ],
      });
      const sidecars = [await startSidecar({ roots }), await startSidecar({ roots })];
      for (const s of sidecars) running.add(s);
      await nth(sidecars, 0, "sidecar").clients.settings.upsertProfile({
        profile: {
          id: "full",
          name: "full",
          provider: "openai",
          baseUrl: model.url,
          model: "m",
          contextWindow: 100_000n,
        },
      });
      await nth(sidecars, 0, "sidecar").clients.settings.setSecret({
        profileId: "full",
        name: "api_key",
        value: TEST_KEY,
      });
      await nth(sidecars, 0, "sidecar").clients.settings.updateSettings({
        scope: 1,
        patch: { autoApprovalSettings: { enabled: true, editFiles: true, maxRequests: 1000 } },
      });
      const ackedTasks = new Set<string>();
      const ackedProfiles = new Set<string>();
      let ops = 0;
      let refused = 0;
      let phase: "before" | "full" | "after" = "before";
      const worker = async (i: number, until: () => boolean) => {
        for (let n = 0; !until(); n++) {
          const s = nth(sidecars, i, "sidecar");
          ops++;
          try {
            if (n % 2 === 0) {
              const { taskId } = await s.clients.tasks.newTask({
                workspaceRoot: workspace,
                text: `full ${phase} ${i}-${n}`,
                profileId: "full",
              });
              ackedTasks.add(taskId);
            } else {
              const id = `full-${i}-${n}`;
              await s.clients.settings.upsertProfile({
                profile: { id, name: id, provider: "openai", baseUrl: "http://127.0.0.1:9", model: "m" },
              });
              ackedProfiles.add(id);
            }
          } catch {
            refused++; // refused while the disk is full: not acknowledged
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const end = Date.now() + 9_000;
      const working = Promise.all([worker(0, () => Date.now() > end), worker(1, () => Date.now() > end)]);
      await new Promise((r) => setTimeout(r, 2_500));
      phase = "full";
      const filler = fillDisk(dir);
      await new Promise((r) => setTimeout(r, 3_000));
      const aliveWhileFull = sidecars.every(
        (s) => s.process.child.exitCode === null && s.process.child.signalCode === null,
      );
      const healthWhileFull = await Promise.all(
        sidecars.map((s) =>
          s.clients.system.health({}).then(
            (h) => h.status,
            () => "failed",
          ),
        ),
      );
      fs.rmSync(filler);
      phase = "after";
      await working;
      expect(aliveWhileFull, "both sidecars alive while the disk was full").toBe(true);
      expect(healthWhileFull).toEqual(["ok", "ok"]);
      expect(refused, "some operations were refused while the disk was full").toBeGreaterThan(0);
      // Quiesce, restart one, check what was acknowledged and every database.
      for (const s of sidecars) {
        await s.stop();
        running.delete(s);
      }
      const final = await startSidecar({ roots });
      running.add(final);
      await new Promise((r) => setTimeout(r, 500));
      const profiles = new Set((await final.clients.settings.listProfiles({})).profiles.map((p) => p.id));
      for (const id of ackedProfiles) expect(profiles.has(id), `profile ${id}`).toBe(true);
      const listed = new Set<string>();
      for (let token = ""; ;) {
        const page = await final.clients.history.listTasks({ pageSize: 200, pageToken: token });
        for (const t of page.tasks) listed.add(t.id);
        if (!page.nextPageToken) break;
        token = page.nextPageToken;
      }
      for (const id of ackedTasks) expect(listed.has(id), `task ${id}`).toBe(true);
      for (const id of ackedTasks) await final.clients.tasks.getTask({ taskId: id });
      const databases = checkDatabases(path.join(roots.docsDir, "tasks"), [...listed]);
      await final.stop();
      running.delete(final);
      await model.stop();
      fs.rmSync(base, { recursive: true, force: true });
      console.log(
        `soak (disk full): ${ops} operations, ${refused} refused while full, ${ackedTasks.size} tasks and ${ackedProfiles.size} profiles acknowledged, ` +
          `${databases} databases checked, crashes: 0, lost: 0`,
      );
    },
  );
});
