/**
 * A sidecar started when the disk is already full (an editor window opened after another one
 * filled it), against the real dist/dline-core with its roots on a small tmpfs (mounted for the
 * test: this needs root; the test says why it is skipped otherwise). Opening a WAL database
 * needs room for its shared-memory file, which SQLite reports as a generic I/O error: the
 * answers must still say resource_exhausted "The disk is full.", nothing stored may change, and
 * once space is freed the same sidecar serves everything. A task claim that cannot be written
 * on the full disk leaves no empty owner.lock behind.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import { TaskOwnership } from "../../core/src/tasks/task-ownership.js";
import { fillDisk, mountSmallTmpfs, rootsOn } from "../helpers/small-disk.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { openStorage, taskEnv } from "../tasks/helpers.js";

const mount = mountSmallTmpfs(12);
const mounted = "dir" in mount ? mount : undefined;
const sidecars: RunningSidecar[] = [];

afterAll(async () => {
  await Promise.all(sidecars.map((s) => s.stop()));
  mounted?.unmount();
}, 60_000);

async function codeOf(call: Promise<unknown>): Promise<string> {
  return call.then(
    () => "ok",
    (err: unknown) => {
      const e = ConnectError.from(err);
      return `${Code[e.code]}: ${e.rawMessage}`;
    },
  );
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["settings/settings.json", "settings/api_profiles.json", "secrets/api_keys.json"]) {
    out[name] = fs.readFileSync(path.join(dir, "data", name), "utf8");
  }
  return out;
}

describe.skipIf(!mounted)(
  `a sidecar started on a full disk ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`,
  () => {
    it("answers resource_exhausted, changes nothing, and serves again once space is freed", async () => {
      const roots = rootsOn(mounted!.dir);
      const env = taskEnv(roots);
      const first = await startSidecar({ roots });
      sidecars.push(first);
      await first.clients.settings.upsertProfile({
        profile: { id: "p", name: "p", provider: "openai", baseUrl: "http://127.0.0.1:9", model: "m" },
      });
      await first.clients.settings.setSecret({ profileId: "p", name: "api_key", value: "not-a-real-key" });
      await first.clients.settings.updateSettings({
        scope: SettingsScope.GLOBAL,
        patch: { autoApprovalSettings: { enabled: true, readFiles: true } },
      });
      await first.stop();
      const local = await openStorage(env);
      const t = local.store.create({ id: "t1", title: "an earlier task", workspaceRoot: "/ws" });
      t.files.messages.append(uiMessage({ id: "m1", text: "kept" }), { durable: true });
      t.release();
      await local.close();
      const stored = snapshot(roots.dlineDir);
      const messagesDb = fs.readFileSync(env.layout.task("t1").messagesDb);

      const filler = fillDisk(mounted!.dir);
      const second = await startSidecar({ roots });
      sidecars.push(second);
      const full = "ResourceExhausted: The disk is full.";
      expect(await codeOf(second.clients.history.listTasks({}))).toBe(full);
      expect(await codeOf(second.clients.tasks.getTask({ taskId: "t1" }))).toBe(full);
      expect(
        await codeOf(second.clients.tasks.newTask({ workspaceRoot: roots.home, text: "hi", profileId: "p" })),
      ).toBe(full);
      expect(await codeOf(second.clients.settings.setSecret({ profileId: "p", name: "api_key", value: "other" }))).toBe(
        full,
      );
      expect(snapshot(roots.dlineDir)).toEqual(stored);
      expect(fs.readFileSync(env.layout.task("t1").messagesDb).equals(messagesDb)).toBe(true);

      // A claim that cannot be written leaves no empty lock file for the next claimer to wait out.
      const ownership = new TaskOwnership(env.layout, env.logger);
      expect(() => ownership.claim("t1")).toThrow(/ENOSPC/);
      expect(fs.existsSync(env.layout.task("t1").ownerLock)).toBe(false);

      fs.rmSync(filler);
      const listed = await second.clients.history.listTasks({});
      expect(listed.tasks.map((x) => x.id)).toEqual(["t1"]);
      // The same sidecar serves tasks again: before, the task calls answered while the storage
      // could not open kept failing until it restarted (its runtime remembered the failed start).
      expect((await second.clients.tasks.getTask({ taskId: "t1" })).messages.map((m) => m.text)).toContain("kept");
      const profiles = (await second.clients.settings.listProfiles({})).profiles;
      expect(profiles.find((p) => p.id === "p")?.secretsSet).toEqual(["api_key"]);
    });
  },
);
