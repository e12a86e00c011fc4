import * as fs from "node:fs";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import type { TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { SettingsScope, type ProfileSchema } from "../../core/src/gen/dline/v1/settings_pb.js";
import type { DlineClients } from "../../core/src/client/index.js";
import type { ModelServerScript, WireFormat } from "../model-server/script.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";

export const TEST_KEY = "sk-test-SECRET-0123456789";

/** A git-initialised project folder with a couple of files. */
export function makeWorkspace(base: string, files: Record<string, string> = {}): string {
  const ws = path.join(base, "project");
  fs.mkdirSync(ws, { recursive: true });
  for (const [name, content] of Object.entries({ "README.md": "# demo\n", "src/app.txt": "hello\n", ...files })) {
    fs.mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
    fs.writeFileSync(path.join(ws, name), content);
  }
  execFileSync("git", ["init", "-q"], { cwd: ws });
  return ws;
}

/** Starts a scripted model server process and configures a profile for it in the sidecar. */
export async function configureModel(
  clients: DlineClients,
  format: WireFormat,
  script: ModelServerScript,
  /** Profile fields that differ from the default scripted profile (100k window, $3/$15). */
  profile: Omit<MessageInitShape<typeof ProfileSchema>, "$typeName"> = {},
): Promise<{ server: ModelServerProcess; profileId: string }> {
  const server = await spawnModelServer({ apiKey: TEST_KEY, ...script });
  const profileId = `scripted-${format}`;
  await clients.settings.upsertProfile({
    profile: {
      id: profileId,
      name: `scripted ${format}`,
      provider: format,
      baseUrl: server.url,
      model: "scripted-model",
      contextWindow: 100_000n,
      inputPricePerMtok: 3,
      outputPricePerMtok: 15,
      ...profile,
    },
  });
  await clients.settings.setSecret({ profileId, name: "api_key", value: TEST_KEY });
  return { server, profileId };
}

export async function setAutoApproval(clients: DlineClients, value: Record<string, unknown>): Promise<void> {
  await clients.settings.updateSettings({
    scope: SettingsScope.GLOBAL,
    patch: { autoApprovalSettings: { enabled: true, maxRequests: 50, ...value } },
  });
}

/**
 * Follows a task's events until its run ends; `onAsk` answers asks. Returns every event seen.
 */
export async function followUntilDone(
  clients: DlineClients,
  taskId: string,
  onAsk: (event: TaskEvent) => Promise<void> | void = () => {},
  afterSeq = 0n,
  done: (status: TaskStatus) => boolean = (s) =>
    s === TaskStatus.COMPLETED || s === TaskStatus.FAILED || s === TaskStatus.CANCELLED || s === TaskStatus.INTERRUPTED,
): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 45_000);
  try {
    for await (const res of clients.tasks.subscribe({ taskId, afterSeq }, { signal: controller.signal })) {
      const event = res.event!;
      events.push(event);
      if (event.event.case === "ask") await onAsk(event);
      if (event.event.case === "statusChanged" && done(event.event.value.status)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return events;
}

export function eventCases(events: TaskEvent[]): string[] {
  return events.map((e) => e.event.case ?? "none");
}
