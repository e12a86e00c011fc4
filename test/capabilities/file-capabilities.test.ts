/**
 * Rules, workflows, skills, subagent definitions, hooks and scoped toggles, end to end: the
 * real sidecar binary runs tasks against the scripted model server, which records what the
 * model received (system prompt, tools, conversation).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { MessageRole, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { ToggleScope, ToggleState } from "../../core/src/gen/dline/v1/settings_pb.js";
import { followUntilDone, setAutoApproval, TEST_KEY } from "../runtime/harness.js";
import {
  activities,
  conversationOf,
  isAlive,
  setupTask,
  systemPromptOf,
  toolNamesOf,
  waitFor,
  writeFile,
} from "./helpers.js";
import { nth } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const done = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });

describe("rules, workflows and skills", () => {
  it("rules reach the system prompt, /name expands a workflow, a skill and its file are loaded", async () => {
    const { clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      { toolCalls: [{ name: "load_skill", input: { name: "pdf-tools" } }] },
      { toolCalls: [{ name: "load_skill", input: { name: "pdf-tools", file: "reference/forms.md" } }] },
      { toolCalls: [{ name: "load_workflow", input: { name: "release" } }] },
      done("released"),
      done("again"),
    ]);
    writeFile(path.join(docs, "rules", "global-style.md"), "Always answer in GLOBAL-RULE-MARKER style.\n");
    writeFile(
      path.join(workspace, ".agents", "rules", "project.md"),
      "---\ndescription: project rule\n---\nUse WORKSPACE-RULE-MARKER conventions.\n",
    );
    writeFile(
      path.join(workspace, ".agents", "workflows", "release.md"),
      "# Release\n1. Bump RELEASE-STEP-MARKER.\n2. Tag it.\n",
    );
    writeFile(
      path.join(workspace, ".agents", "skills", "pdf", "SKILL.md"),
      "---\nname: pdf-tools\ndescription: Fill PDF forms (SKILL-DESCRIPTION-MARKER)\n---\nSKILL-INSTRUCTIONS-MARKER: read reference/forms.md first.\n",
    );
    writeFile(path.join(workspace, ".agents", "skills", "pdf", "reference", "forms.md"), "SKILL-FILE-MARKER\n");

    const { taskId } = await clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Please run /release now",
      profileId,
    });
    await followUntilDone(clients, taskId);
    const requests = await server.requests();
    expect(requests).toHaveLength(4);
    const prompt = systemPromptOf(recorded(requests, 0));
    expect(prompt).toContain("GLOBAL-RULE-MARKER");
    expect(prompt).toContain("WORKSPACE-RULE-MARKER");
    expect(prompt).not.toContain("description: project rule"); // front matter is not rule text
    expect(prompt).toContain("pdf-tools: Fill PDF forms (SKILL-DESCRIPTION-MARKER)");
    expect(prompt).not.toContain("SKILL-INSTRUCTIONS-MARKER"); // loaded on demand only
    expect(toolNamesOf(recorded(requests, 0))).toEqual(expect.arrayContaining(["load_skill", "load_workflow"]));
    // The model read the workflow expanded; the chat keeps what the person typed.
    expect(conversationOf(recorded(requests, 0))).toContain("RELEASE-STEP-MARKER");
    const task = await clients.tasks.getTask({ taskId });
    const first = task.messages.find((m) => m.role === MessageRole.USER)!;
    expect(first.text).toBe("Please run /release now");
    // load_skill gave the instructions and the list of files, then a file.
    expect(conversationOf(recorded(requests, 1))).toContain("SKILL-INSTRUCTIONS-MARKER");
    expect(conversationOf(recorded(requests, 1))).toContain("reference/forms.md");
    expect(conversationOf(recorded(requests, 2))).toContain("SKILL-FILE-MARKER");
    expect(conversationOf(recorded(requests, 3))).toContain("Tag it.");

    // A change on disk applies to the next turn: a rule edited, a new one, a skill removed.
    writeFile(path.join(docs, "rules", "global-style.md"), "EDITED-RULE-MARKER\n");
    writeFile(path.join(workspace, ".agents", "rules", "later.md"), "LATER-RULE-MARKER\n");
    fs.rmSync(path.join(workspace, ".agents", "skills"), { recursive: true });
    await clients.tasks.sendMessage({ taskId, text: "once more" });
    await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    const later = systemPromptOf(recorded(await server.requests(), 4));
    expect(later).toContain("EDITED-RULE-MARKER");
    expect(later).not.toContain("GLOBAL-RULE-MARKER");
    expect(later).toContain("LATER-RULE-MARKER");
    expect(later).not.toContain("pdf-tools");
    expect(toolNamesOf(recorded(await server.requests(), 4))).not.toContain("load_skill");
  });

  it("a repository's rule, skill and MCP files that link outside it, or into Dline's storage, are never read", async () => {
    const { clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      { toolCalls: [{ name: "load_skill", input: { name: "helper" } }] },
      { toolCalls: [{ name: "load_skill", input: { name: "helper", file: "notes.txt" } }] },
      done("done"),
    ]);
    // Secrets beside the workspace (a user's ~/.ssh, ~/.aws) and in Dline's own documents folder.
    const outside = path.join(path.dirname(workspace), "outside");
    writeFile(path.join(outside, "id_rsa"), "SSH-KEY-OUTSIDE-MARKER\n");
    writeFile(path.join(outside, "credentials"), "AWS-SECRET-OUTSIDE-MARKER\n");
    writeFile(path.join(outside, "rules", "r.md"), "OUTSIDE-FOLDER-MARKER\n");
    writeFile(path.join(docs, "settings", "private.json"), '{"key": "STORAGE-SECRET-MARKER"}\n');
    // A cloned repository can carry these links (git keeps symlinks).
    fs.mkdirSync(path.join(workspace, ".clinerules"), { recursive: true });
    fs.symlinkSync(path.join(outside, "id_rsa"), path.join(workspace, ".clinerules", "id"));
    fs.symlinkSync(path.join(docs, "settings", "private.json"), path.join(workspace, ".clinerules", "k"));
    fs.symlinkSync(path.join(outside, "rules"), path.join(workspace, ".clinerules", "more"));
    fs.symlinkSync(path.join(outside, "credentials"), path.join(workspace, "AGENTS.md"));
    writeFile(
      path.join(workspace, ".agents", "skills", "helper", "SKILL.md"),
      "---\ndescription: helps\n---\nHELPER-SKILL-MARKER\n",
    );
    fs.symlinkSync(path.join(outside, "credentials"), path.join(workspace, ".agents", "skills", "helper", "notes.txt"));
    fs.mkdirSync(path.join(workspace, ".agents", "mcp"), { recursive: true });
    fs.symlinkSync(path.join(docs, "settings", "private.json"), path.join(workspace, ".agents", "mcp", "k.json"));
    // A link that stays inside the workspace is read as before.
    writeFile(path.join(workspace, "docs", "team-rules.md"), "TEAM-RULE-MARKER\n");
    fs.symlinkSync(path.join(workspace, "docs", "team-rules.md"), path.join(workspace, ".clinerules", "team"));

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "go", profileId });
    await followUntilDone(clients, taskId);
    const requests = await server.requests();
    const everything = JSON.stringify(requests.map((r) => r.body));
    for (const marker of [
      "SSH-KEY-OUTSIDE-MARKER",
      "AWS-SECRET-OUTSIDE-MARKER",
      "OUTSIDE-FOLDER-MARKER",
      "STORAGE-SECRET-MARKER",
    ])
      expect(everything).not.toContain(marker);
    expect(systemPromptOf(recorded(requests, 0))).toContain("TEAM-RULE-MARKER");
    expect(conversationOf(recorded(requests, 1))).toContain("HELPER-SKILL-MARKER");
    expect(conversationOf(recorded(requests, 2))).toContain('has no file \\"notes.txt\\"');

    // The listing says why: the person sees the links, not silence.
    const rules = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "rules" });
    const byName = new Map(rules.capabilities.map((c) => [c.name, c]));
    for (const name of [".clinerules/id", ".clinerules/k", "AGENTS.md"])
      expect(byName.get(name)?.error).toMatch(/links outside the workspace/);
    expect(byName.get(".clinerules/team")?.error).toBe("");
    expect([...byName.keys()].some((n) => n.startsWith(".clinerules/more"))).toBe(false);
  });

  it("toggles at three scopes decide what is on, a missing entry inherits", async () => {
    const { clients, server, profileId, workspace, docs } = await setupTask(cleanups, [done("one"), done("two")]);
    for (const name of ["r1", "r2", "r3", "r4"])
      writeFile(path.join(docs, "rules", `${name}.md`), `RULE-${name.toUpperCase()}-MARKER\n`);
    const set = (scope: ToggleScope, resource: string, state: ToggleState, taskId = "") =>
      clients.settings.setCapabilityToggle({ scope, workspaceRoot: workspace, taskId, kind: "rules", resource, state });
    await set(ToggleScope.GLOBAL, "r1.md", ToggleState.DISABLED);
    await set(ToggleScope.GLOBAL, "r2.md", ToggleState.DISABLED);
    await set(ToggleScope.WORKSPACE, "r2.md", ToggleState.ENABLED); // workspace beats global

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "go", profileId });
    await followUntilDone(clients, taskId);
    let prompt = systemPromptOf(recorded(await server.requests(), 0));
    expect(prompt).not.toContain("RULE-R1-MARKER");
    expect(prompt).toContain("RULE-R2-MARKER");
    expect(prompt).toContain("RULE-R3-MARKER");
    expect(prompt).toContain("RULE-R4-MARKER");

    // Task scope is the strongest; clearing an entry (inherit) falls back to the weaker scope.
    await set(ToggleScope.TASK, "r1.md", ToggleState.ENABLED, taskId);
    await set(ToggleScope.TASK, "r3.md", ToggleState.DISABLED, taskId);
    await set(ToggleScope.WORKSPACE, "r2.md", ToggleState.INHERIT);
    await clients.tasks.sendMessage({ taskId, text: "again" });
    await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    prompt = systemPromptOf(recorded(await server.requests(), 1));
    expect(prompt).toContain("RULE-R1-MARKER");
    expect(prompt).not.toContain("RULE-R2-MARKER");
    expect(prompt).not.toContain("RULE-R3-MARKER");
    expect(prompt).toContain("RULE-R4-MARKER");

    // The listing shows each scope's entry and what decided; another context is not affected.
    const listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, taskId, kind: "rules" });
    const byResource = new Map(listed.capabilities.map((c) => [c.resource, c]));
    expect([...byResource.keys()].sort()).toEqual(["r1.md", "r2.md", "r3.md", "r4.md"]);
    expect(byResource.get("r1.md")!.toggle).toMatchObject({
      enabled: true,
      decidedBy: ToggleScope.TASK,
      global: ToggleState.DISABLED,
      task: ToggleState.ENABLED,
    });
    expect(byResource.get("r2.md")!.toggle).toMatchObject({
      enabled: false,
      decidedBy: ToggleScope.GLOBAL,
      workspace: ToggleState.INHERIT,
    });
    expect(byResource.get("r4.md")!).toMatchObject({
      enabled: true,
      origin: "global",
      sourcePath: path.join(docs, "rules", "r4.md"),
    });
    expect(byResource.get("r4.md")!.toggle!.decidedBy).toBe(ToggleScope.UNSPECIFIED);
    const withoutTask = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "rules" });
    expect(withoutTask.capabilities.find((c) => c.resource === "r3.md")!.enabled).toBe(true);
    const bad = await clients.settings.listCapabilities({ kind: "gadgets" }).catch((e) => e);
    expect(ConnectError.from(bad).code).toBe(Code.InvalidArgument);
  });
});

describe("subagents and hooks", () => {
  it("a named subagent runs with its instructions and tools, and its own subagent is stored nested", async () => {
    const { clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      { toolCalls: [{ name: "new_subagent", input: { prompt: "Review src/app.txt", subagent: "reviewer" } }] },
      { toolCalls: [{ name: "new_subagent", input: { prompt: "Count the lines" } }] }, // the reviewer's own subagent
      done("inner done"),
      { toolCalls: [{ name: "read_file", input: { path: "src/app.txt" } }] },
      done("looks fine"),
      done("all reviewed"),
    ]);
    await setAutoApproval(clients, { readFiles: true });
    // The reviewer runs on its own model profile (same scripted server, another model name).
    const base = (await clients.settings.listProfiles({})).profiles.find((p) => p.id === profileId)!;
    await clients.settings.upsertProfile({
      profile: { ...base, id: "reviewer-model", name: "reviewer", model: "reviewer-model-x", secretsSet: [] },
    });
    await clients.settings.setSecret({ profileId: "reviewer-model", name: "api_key", value: TEST_KEY });
    writeFile(
      path.join(workspace, ".agents", "subagents", "reviewer.md"),
      "---\nname: reviewer\ndescription: Reviews files\ntools: [read_file, new_subagent]\nprofile: reviewer-model\n---\nYou are REVIEWER-MARKER: review carefully.\n",
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "review please", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(events.at(-1)!.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    const requests = await server.requests();
    expect(requests).toHaveLength(6);
    expect(conversationOf(recorded(requests, 1))).toContain("REVIEWER-MARKER");
    expect(conversationOf(recorded(requests, 1))).toContain("Review src/app.txt");
    expect(toolNamesOf(recorded(requests, 1)).sort()).toEqual(["attempt_completion", "new_subagent", "read_file"]);
    expect(requests.map((r) => r.body.model)).toEqual([
      "scripted-model",
      "reviewer-model-x",
      "reviewer-model-x",
      "reviewer-model-x",
      "reviewer-model-x",
      "scripted-model",
    ]);
    expect(conversationOf(recorded(requests, 3))).toContain("inner done");
    expect(conversationOf(recorded(requests, 5))).toContain("looks fine");
    // Stored nested: tasks/<id>/subagents/<reviewer>/subagents/<inner>/.
    const subDir = path.join(docs, "tasks", taskId, "subagents");
    const reviewer = nth(fs.readdirSync(subDir), 0, "subagent folder");
    const meta = JSON.parse(fs.readFileSync(path.join(subDir, reviewer, "task_metadata.json"), "utf8"));
    expect(meta.kind).toBe("subagent");
    const inner = nth(fs.readdirSync(path.join(subDir, reviewer, "subagents")), 0, "nested subagent folder");
    expect(fs.existsSync(path.join(subDir, reviewer, "subagents", inner, "messages.db"))).toBe(true);
    expect(fs.existsSync(path.join(subDir, reviewer, "journal.db"))).toBe(true);
  });

  it("hooks get no secret in their environment, and a secret they print is redacted everywhere", async () => {
    const envKey = "sk-ant-from-the-environment-0123456789";
    const { clients, server, profileId, workspace } = await setupTask(
      cleanups,
      [{ toolCalls: [{ name: "read_file", input: { path: "README.md" } }] }, done("could not")],
      "openai",
      { ANTHROPIC_API_KEY: envKey },
    );
    await setAutoApproval(clients, { readFiles: true });
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true });
    // Reversed, a key would pass the redaction of its exact text; the stored key printed as it
    // is (by a hook that found it somewhere) must be redacted.
    const leak = `printf '%s|' "$ANTHROPIC_API_KEY" | rev; echo; echo "count=$(env | grep -c ANTHROPIC_API_KEY)"; echo "stored=${TEST_KEY}"`;
    writeFile(
      path.join(workspace, ".agents", "hooks", "UserPromptSubmit.sh"),
      `#!/bin/sh\ncat > /dev/null\n${leak}\n`,
      0o755,
    );
    writeFile(
      path.join(workspace, ".agents", "hooks", "PreToolUse.sh"),
      `#!/bin/sh\ncase "$(cat)" in *'"tool":"read_file"'*) ${leak}; exit 3;; esac\n`,
      0o755,
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "read the readme", profileId });
    await followUntilDone(clients, taskId);
    const sidecarDocs = path.join(workspace, "..", "docs");
    const hooks = activities(path.join(sidecarDocs, "tasks", taskId, "activities.db")).filter((a) => a.kind === "hook");
    expect(hooks.map((h) => h.data.event)).toEqual(["UserPromptSubmit", "PreToolUse", "PreToolUse"]);
    // What the hooks printed, as recorded and as the model read it (request bodies only: the
    // requests' headers carry the key by design).
    const requests = await server.requests();
    const seen = [JSON.stringify(hooks), ...requests.map((r) => JSON.stringify(r.body))].join("\n");
    expect(seen.includes("count=0"), "a hook's environment holds no secret").toBe(true);
    expect(seen.includes("stored=[redacted]"), "a stored secret a hook printed is redacted").toBe(true);
    expect(seen.includes([...envKey].reverse().join("")), "the environment's key, reversed").toBe(false);
    expect(seen.includes(TEST_KEY), "the stored key").toBe(false);
    // The blocked read told the model the hook's (redacted) words.
    expect(conversationOf(recorded(requests, 1))).toContain("stored=[redacted]");
  });

  it("a hook still running when its sidecar is SIGKILLed dies with it, and so does what it started", async () => {
    const { sidecar, profileId, workspace, clients } = await setupTask(cleanups, [done("never reached")]);
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true });
    writeFile(
      path.join(workspace, ".agents", "hooks", "UserPromptSubmit.sh"),
      "#!/bin/sh\ncat > /dev/null\nsleep 64 & echo $! > child.pid\necho $$ > hook.pid\nwait\n",
      0o755,
    );
    // NewTask answers once the hook has run: the sidecar is killed before that.
    const answer = clients.tasks.newTask({ workspaceRoot: workspace, text: "hello", profileId }).catch(() => {});
    const pids = await waitFor(async () => {
      const read = (name: string) => {
        const file = path.join(workspace, name);
        const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
        return text.endsWith("\n") ? Number(text) : undefined;
      };
      const [hook, child] = [read("hook.pid"), read("child.pid")];
      return hook && child ? [hook, child] : undefined;
    }, "the hook to start");
    cleanups.push(async () => pids.forEach((pid) => isAlive(pid) && process.kill(pid, "SIGKILL")));
    sidecar.process.child.kill("SIGKILL");
    await Promise.all([sidecar.process.exited, answer]);
    await waitFor(async () => (pids.some(isAlive) ? undefined : true), "the hook and its child to die");
  });

  it("a PreToolUse hook blocks a write (exit code) and a read (JSON); hook output is an activity", async () => {
    const { clients, server, profileId, workspace } = await setupTask(cleanups, [
      { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "overwritten\n" } }] },
      { toolCalls: [{ name: "read_file", input: { path: "README.md" } }] },
      done("could not"),
    ]);
    await setAutoApproval(clients, { readFiles: true, editFiles: true });
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true }); // workspace hooks run once trusted
    writeFile(
      path.join(workspace, ".agents", "hooks", "PreToolUse.sh"),
      [
        "#!/bin/sh",
        "payload=$(cat)",
        'case "$payload" in',
        '  *\'"tool":"write_to_file"\'*) echo "HOOK-WRITES-FROZEN for $DLINE_HOOK_EVENT" >&2; exit 2;;',
        '  *\'"tool":"read_file"\'*) echo \'{"block": true, "reason": "HOOK-NO-READING"}\';;',
        "esac",
        "exit 0",
      ].join("\n") + "\n",
      0o755,
    );
    writeFile(
      path.join(workspace, ".agents", "hooks", "UserPromptSubmit", "log.sh"),
      "#!/bin/sh\ncat > /dev/null\necho PROMPT-HOOK-RAN\n",
      0o755,
    );
    writeFile(path.join(workspace, ".agents", "hooks", "TaskComplete"), "#!/bin/sh\necho not executable\n"); // reported, never run

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "overwrite app.txt", profileId });
    await followUntilDone(clients, taskId);
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    const requests = await server.requests();
    expect(conversationOf(recorded(requests, 1))).toContain("HOOK-WRITES-FROZEN for PreToolUse");
    expect(conversationOf(recorded(requests, 2))).toContain("HOOK-NO-READING");
    expect(conversationOf(recorded(requests, 2))).not.toContain("# demo"); // README was not read

    const sidecarDocs = path.join(workspace, "..", "docs");
    const hooks = activities(path.join(sidecarDocs, "tasks", taskId, "activities.db")).filter((a) => a.kind === "hook");
    // The prompt, the write, the read, the completion (allowed); the non-executable TaskComplete never ran.
    expect(hooks.map((h) => h.data.event)).toEqual(["UserPromptSubmit", "PreToolUse", "PreToolUse", "PreToolUse"]);
    expect(nth(hooks, 3, "hook run").data).toMatchObject({ exitCode: 0 });
    expect(nth(hooks, 3, "hook run").data.blocked).toBeUndefined();
    expect(nth(hooks, 0, "hook run").data.output).toContain("PROMPT-HOOK-RAN");
    expect(nth(hooks, 1, "hook run").data).toMatchObject({ hook: ".agents/hooks/PreToolUse.sh", exitCode: 2 });
    expect(String(nth(hooks, 1, "hook run").data.blocked)).toContain("HOOK-WRITES-FROZEN");
    expect(nth(hooks, 2, "hook run").data.blocked).toBe("HOOK-NO-READING");
    // The hook's words are never the person's.
    const task = await clients.tasks.getTask({ taskId });
    expect(task.messages.filter((m) => m.role === MessageRole.USER).map((m) => m.text)).toEqual(["overwrite app.txt"]);
    const listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "hooks" });
    const notExecutable = listed.capabilities.find((c) => c.resource === "TaskComplete")!;
    expect(notExecutable.enabled).toBe(false);
    expect(notExecutable.error).toContain("not executable");
  });
});
