/**
 * Models and repositories people already have, through the real sidecar: models without native
 * tool calling (Cline's XML tool calls in text, chosen per profile or after the server refused
 * `tools`), Cline's and the common agents' files (.clineignore, .clinerules, AGENTS.md,
 * .cursorrules, .windsurfrules as toggleable rules), and the environment details of the first
 * request (the workspace's top-level files, the editor's files when the client reports them).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToggleScope, ToggleState } from "../../core/src/gen/dline/v1/settings_pb.js";
import { MessageRole, TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { ModelServerScript, WireFormat } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import { nth, lastOf } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function setup(
  format: WireFormat,
  script: ModelServerScript,
  profile: Parameters<typeof configureModel>[3] = {},
  files: Record<string, string> = {},
) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, format, script, profile);
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base, files);
  await setAutoApproval(sidecar.clients, { readFiles: true, editFiles: true });
  return { sidecar, server, profileId, workspace, clients: sidecar.clients };
}

function lastStatus(events: TaskEvent[]) {
  const last = lastOf(events, "event");
  return last.event.case === "statusChanged" ? last.event.value.status : undefined;
}

const xmlTurns = [
  { text: "I will read the file first.\n\n<read_file>\n<path>src/app.txt</path>\n</read_file>" },
  {
    text: "It says hello. Writing the note.\n<write_to_file>\n<path>note.txt</path>\n<content>\nfrom a model without tools\n</content>\n</write_to_file>",
  },
  { text: "<attempt_completion>\n<result>Read app.txt and wrote note.txt.</result>\n</attempt_completion>" },
];

describe("models without native tool calling", () => {
  it("a server that refuses `tools` makes the task call tools in text (Cline's XML), and the calls run", async () => {
    const { clients, server, profileId, workspace } = await setup("openai", { rejectTools: true, turns: xmlTurns });
    const { taskId } = await clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "read app.txt and write a note",
      profileId,
    });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(fs.readFileSync(path.join(workspace, "note.txt"), "utf8")).toBe("from a model without tools");
    const requests = await server.requests();
    expect(recorded(requests, 0).status).toBe(400);
    for (const r of requests.slice(1)) {
      expect(r.status).toBe(200);
      expect(r.body.tools).toBeUndefined();
    }
    expect(recorded(requests, 1).body.messages[0].content).toContain("<read_file>");
    // Earlier calls and results go back as text in the same format.
    const later = JSON.stringify(recorded(requests, 2).body.messages);
    expect(later).toContain("[read_file for 'src/app.txt'] Result:");
    expect(later).toContain("hello");
    // People read the answer, not the XML; the task completes with the model's result.
    const task = await clients.tasks.getTask({ taskId });
    const texts = task.messages.filter((m) => m.kind === "text" && m.role === MessageRole.ASSISTANT).map((m) => m.text);
    expect(texts).toEqual(["I will read the file first.", "It says hello. Writing the note."]);
    expect(events.some((e) => e.event.case === "messageDelta" && e.event.value.text.includes("<read_file"))).toBe(
      false,
    );
    expect(task.messages[task.messages.length - 1]).toMatchObject({
      kind: "completion",
      text: "Read app.txt and wrote note.txt.",
    });
  });

  it("a profile set to the XML format never sends `tools`", async () => {
    const { clients, server, profileId, workspace } = await setup(
      "anthropic",
      { turns: xmlTurns },
      { toolCallFormat: "xml" },
    );
    const { taskId } = await clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "read app.txt and write a note",
      profileId,
    });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    const requests = await server.requests();
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.status).toBe(200);
      expect(r.body.tools).toBeUndefined();
    }
    // Anthropic takes no tool blocks without tools: the conversation went back as text.
    expect(JSON.stringify(recorded(requests, 2).body.messages)).not.toMatch(/"type":"tool_(use|result)"/);
  });
});

describe("the files of Cline and the common agents", () => {
  const files = {
    ".clineignore": ".env\nsecrets/\n",
    ".env": "API_TOKEN=hunter2-from-dotenv\n",
    ".clinerules/style.md": "CLINERULE-STYLE: use tabs.",
    "AGENTS.md": "AGENTS-MD: run the tests before finishing.",
    ".cursorrules": "CURSOR-RULE: prefer small functions.",
    ".windsurfrules": "WINDSURF-RULE: explain changes.",
  };

  it(".clineignore keeps a file from the model; rule files are in the prompt, listed and toggleable", async () => {
    const { clients, server, profileId, workspace } = await setup(
      "anthropic",
      {
        turns: [
          { toolCalls: [{ name: "read_file", input: { path: ".env" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
          { text: "second run" },
        ],
      },
      {},
      files,
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "read .env", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    const requests = await server.requests();
    const all = JSON.stringify(requests);
    expect(all).not.toContain("hunter2-from-dotenv");
    expect(JSON.stringify(recorded(requests, 1).body.messages)).toContain("blocked by the workspace's ignore file");
    const system = JSON.stringify(recorded(requests, 0).body.system);
    for (const rule of ["CLINERULE-STYLE", "AGENTS-MD", "CURSOR-RULE", "WINDSURF-RULE"])
      expect(system, rule).toContain(rule);
    // The environment details list neither the ignored .env nor anything under secrets/.
    const details = JSON.stringify(recorded(requests, 0).body.messages).split("<environment_details>")[1];
    expect(details).toContain(".clinerules/");
    expect(details).not.toMatch(/\\n\.env\\n/);

    const listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "rules" });
    expect(listed.capabilities.map((c) => c.resource).sort()).toEqual([
      ".clinerules/style.md",
      ".cursorrules",
      ".windsurfrules",
      "AGENTS.md",
    ]);
    await clients.settings.setCapabilityToggle({
      scope: ToggleScope.WORKSPACE,
      workspaceRoot: workspace,
      kind: "rules",
      resource: "AGENTS.md",
      state: ToggleState.DISABLED,
    });
    await clients.tasks.sendMessage({ taskId, text: "again" });
    await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    const third = recorded(await server.requests(), 2);
    expect(JSON.stringify(third.body.system)).not.toContain("AGENTS-MD");
    expect(JSON.stringify(third.body.system)).toContain("CURSOR-RULE");
  });
});

describe("environment details", () => {
  it("the first request lists the workspace's top-level files and the editor's visible and open files", async () => {
    const { clients, server, profileId, workspace } = await setup(
      "openai",
      { turns: [{ text: "ok" }, { text: "ok again" }] },
      {},
      { "lib/util.ts": "export {}\n", "package.json": "{}\n" },
    );
    const { taskId } = await clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "look around",
      profileId,
      editor: {
        visibleFiles: [path.join(workspace, "lib/util.ts")],
        openFiles: ["lib/util.ts", "README.md", "/etc/passwd"],
      },
    });
    await followUntilDone(clients, taskId);
    await clients.tasks.sendMessage({
      taskId,
      text: "and now",
      editor: { visibleFiles: ["package.json"], openFiles: [] },
    });
    await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    const requests = await server.requests();
    const first = recorded(requests, 0).body.messages[1].content as string;
    expect(first).toContain("look around");
    expect(first).toContain("<environment_details>");
    expect(first).toMatch(/# Visible files in the editor\nlib\/util\.ts/);
    expect(first).toMatch(/# Files open in the editor\nlib\/util\.ts\nREADME\.md\n/);
    expect(first).not.toContain("/etc/passwd");
    expect(first).toMatch(/# Workspace files \(.*, top level\)\nlib\/\npackage\.json\nREADME\.md\nsrc\//);
    // A later message carries what the editor shows then, without the workspace listing.
    const later = JSON.stringify(recorded(requests, 1).body.messages);
    expect(later).toContain("# Visible files in the editor\\npackage.json");
    expect(later.split("# Workspace files").length - 1).toBe(1);
    // The chat shows what was typed.
    const task = await clients.tasks.getTask({ taskId });
    expect(nth(task.messages, 0, "message").text).toBe("look around");
  });
});
