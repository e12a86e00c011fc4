import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { readJson } from "./helpers.js";

const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function start(...args: Parameters<typeof startSidecar>) {
  const s = await startSidecar(...args);
  running.push(s);
  return s;
}

/** Runs `count` operations with at most `width` in flight. */
async function pool(count: number, width: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await op(next++);
    }),
  );
}

/** Every JSON file under `dir` (temporary files excluded) parses. */
function expectAllJsonParses(dir: string): string[] {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".json")) files.push(full);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  for (const file of files) expect(() => JSON.parse(fs.readFileSync(file, "utf8")), file).not.toThrow();
  return files;
}

const GLOBAL = SettingsScope.GLOBAL;
const N = 500;

describe("two sidecars over the same roots", () => {
  // Bounded in count; the generous timeout only catches a hang on a loaded 2-core machine.
  it(
    `apply ${N} UpdateSettings each to different keys and ${N} profile upserts without losing one`,
    { timeout: 240_000 },
    async () => {
      const a = await start();
      const b = await start({ roots: a.roots });
      const dataRoot = path.join(a.roots.dlineDir, "data");
      await Promise.all([
        pool(N, 4, (i) =>
          a.clients.settings.updateSettings({ scope: GLOBAL, patch: { commandTimeoutSeconds: i + 1 } }),
        ),
        pool(N, 4, (i) =>
          b.clients.settings.updateSettings({ scope: GLOBAL, patch: { terminalOutputLineLimit: i + 1 } }),
        ),
        pool(N / 2, 2, (i) =>
          a.clients.settings.upsertProfile({ profile: { id: `a-${i}`, name: `A ${i}`, provider: "anthropic" } }),
        ),
        pool(N / 2, 2, (i) =>
          b.clients.settings.upsertProfile({ profile: { id: `b-${i}`, name: `B ${i}`, provider: "openai" } }),
        ),
      ]);
      const settings = await b.clients.settings.getSettings({ scope: GLOBAL });
      // Every write bumped the revision once: none was lost or applied to a stale copy.
      expect(settings.revision).toBe(BigInt(2 * N));
      expect(typeof settings.settings?.commandTimeoutSeconds).toBe("number");
      expect(typeof settings.settings?.terminalOutputLineLimit).toBe("number");
      const profiles = await a.clients.settings.listProfiles({});
      expect(new Set(profiles.profiles.map((p) => p.id)).size).toBe(N);
      expect(readJson(path.join(dataRoot, "settings", "api_profiles.json")).__revision).toBe(N);
      expectAllJsonParses(dataRoot);
      expect(fs.existsSync(path.join(dataRoot, "settings", "settings.json.lock"))).toBe(false);
    },
  );
});

describe("a sidecar killed with SIGKILL in the middle of writes", () => {
  it("leaves parseable files with the old or the new content, and its lock is recovered", async () => {
    const roots = makeTestRoots();
    const victim = await start({ roots });
    const settingsFile = path.join(roots.dlineDir, "data", "settings", "settings.json");
    let acknowledged = 0;
    // One writer in flight: update i sets the value i and (from an empty file) revision i,
    // so a whole file always has value === revision.
    const writer = (async () => {
      for (let i = 1; ; i++) {
        await victim.clients.settings.updateSettings({ scope: GLOBAL, patch: { commandTimeoutSeconds: i } });
        acknowledged = i;
      }
    })().catch(() => "stopped");
    const profileWriter = (async () => {
      for (let i = 0; ; i++)
        await victim.clients.settings.upsertProfile({ profile: { id: `p${i}`, name: "x", provider: "anthropic" } });
    })().catch(() => "stopped");
    while (acknowledged < 40) await new Promise((r) => setTimeout(r, 5));
    victim.process.child.kill("SIGKILL");
    expect(await victim.process.exited).toBe("SIGKILL");
    await Promise.all([writer, profileWriter]);

    expectAllJsonParses(path.join(roots.dlineDir, "data"));
    const onDisk = readJson(settingsFile);
    expect(onDisk.commandTimeoutSeconds).toBe(onDisk.__revision);
    expect(onDisk.__revision).toBeGreaterThanOrEqual(acknowledged);
    expect(onDisk.__revision).toBeLessThanOrEqual(acknowledged + 1);

    // If the kill did not land inside the critical section, leave the lock exactly as such a
    // kill would: a fresh lock folder whose owner is gone.
    const lock = `${settingsFile}.lock`;
    if (!fs.existsSync(lock)) fs.mkdirSync(lock);
    // Likewise a half-written temp file of the dead writer (kill between open and rename).
    const orphan = path.join(path.dirname(settingsFile), `.settings.json.${victim.process.child.pid}.999999.tmp`);
    fs.writeFileSync(orphan, '{"__revision": 99');
    const next = await start({ roots });
    const after = await next.clients.settings.updateSettings({ scope: GLOBAL, patch: { commandTimeoutSeconds: 1 } });
    expect(after.revision).toBe(BigInt(onDisk.__revision + 1));
    expect(fs.existsSync(lock)).toBe(false);
    // The first write of each file by the new process sweeps the dead writer's temp files.
    await next.clients.settings.upsertProfile({ profile: { id: "after", name: "x", provider: "openai" } });
    const leftovers = fs
      .readdirSync(path.dirname(settingsFile))
      .filter((n) => n.includes(`.${victim.process.child.pid}.`));
    expect(leftovers).toEqual([]);
  });
});
