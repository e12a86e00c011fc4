/**
 * Attacks through the tools, against the real dist/dline-core and the scripted model server:
 * what a repository's content or a model's tool calls could make the core do. Each `attack`
 * is named for the attack; it holds when every check in it passes. The file ends with
 * "security attacks: N tried, N held" and the checks' tally line.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { AskKind, TaskEventSchema, TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import type { ScriptTurn } from "../model-server/script.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace } from "../runtime/harness.js";
import { attack, attackLine, check, redactions, stopOrKill, tallyLine, waitFor, withDeadline } from "./helpers.js";
import { recorded } from "../model-server/script.js";
import { nth } from "../helpers/items.js";
import { isRunning } from "../helpers/processes.js";

const SECRET = `sk-tool-${Math.random().toString(36).slice(2)}-NEVER-SHOWN`;
redactions.push(SECRET);

let main: RunningSidecar;
const servers: ModelServerProcess[] = [];
const sidecars: RunningSidecar[] = [];

beforeAll(async () => {
  main = await startSidecar();
  sidecars.push(main);
});
afterAll(async () => {
  console.log(attackLine());
  console.log(tallyLine());
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(sidecars.map((s) => stopOrKill(s)));
  for (const s of sidecars) fs.rmSync(s.roots.base, { recursive: true, force: true });
});

/** A profile with SECRET as its key, backed by a scripted model server playing `turns`. */
async function scripted(
  sidecar: RunningSidecar,
  turns: ScriptTurn[],
): Promise<{ profileId: string; server: ModelServerProcess }> {
  const server = await spawnModelServer({ apiKey: SECRET, turns });
  servers.push(server);
  const profileId = `atk-${servers.length}`;
  await sidecar.clients.settings.upsertProfile({
    profile: {
      id: profileId,
      name: profileId,
      provider: "openai",
      baseUrl: server.url,
      model: "m",
      contextWindow: 100_000n,
    },
  });
  await sidecar.clients.settings.setSecret({ profileId, name: "api_key", value: SECRET });
  return { profileId, server };
}

async function autoApprove(sidecar: RunningSidecar, value: Record<string, unknown>): Promise<void> {
  await sidecar.clients.settings.updateSettings({
    scope: SettingsScope.GLOBAL,
    patch: {
      autoApprovalSettings: {
        enabled: true,
        readFiles: false,
        editFiles: false,
        executeSafeCommands: false,
        executeAllCommands: false,
        maxRequests: 100,
        ...value,
      },
    },
  });
}

function finishedById(events: TaskEvent[]): Map<string, { ok: boolean; result: string }> {
  return new Map(
    events.flatMap((e) =>
      e.event.case === "toolFinished" ? [[e.event.value.toolCallId, e.event.value] as const] : [],
    ),
  );
}

function lastStatus(events: TaskEvent[]): TaskStatus | undefined {
  const last = [...events].reverse().find((e) => e.event.case === "statusChanged");
  return last?.event.case === "statusChanged" ? last.event.value.status : undefined;
}

/** Every event of a task until its run ends (or `ms` pass: a hung task is a failed check, not a hung test). */
async function follow(
  sidecar: RunningSidecar,
  taskId: string,
  ms: number,
  onEvent: (e: TaskEvent) => void | Promise<void> = () => {},
): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: controller.signal })) {
      events.push(res.event!);
      await onEvent(res.event!);
      const e = res.event!.event;
      if (
        e.case === "statusChanged" &&
        [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.INTERRUPTED].includes(e.value.status)
      )
        break;
    }
  } catch {
    // aborted: the events so far
  } finally {
    clearTimeout(timer);
  }
  return events;
}

/**
 * Follows a task, denying every tool approval (other asks are answered yes): the events, and the
 * details of the approvals it asked for.
 */
async function followDenyingApprovals(
  sidecar: RunningSidecar,
  taskId: string,
): Promise<{ events: TaskEvent[]; asked: string[] }> {
  const asked: string[] = [];
  const events = await follow(sidecar, taskId, 60_000, async (e) => {
    if (e.event.case !== "ask") return;
    const approval = e.event.value.kind === AskKind.TOOL_APPROVAL;
    if (approval) asked.push(e.event.value.detail);
    await sidecar.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: !approval });
  });
  return { events, asked };
}

function newWorkspace(sidecar: RunningSidecar, name: string, files: Record<string, string> = {}): string {
  return makeWorkspace(fs.mkdtempSync(path.join(sidecar.roots.base, `${name}-`)), files);
}

type WriteCall = { id: string; name: string; input: { path: string; content?: string; diff?: string } };

/**
 * A task that writes an ordinary file (auto-approved: the control), then each target in a turn
 * of its own, then `after`; every approval is denied. Checks the control and that each target
 * was asked for.
 */
async function writesAskedFor(ws: string, targets: WriteCall[], after: ScriptTurn[] = []) {
  const { profileId } = await scripted(main, [
    { toolCalls: [{ id: "ok", name: "write_to_file", input: { path: "docs/notes.md", content: "fine\n" } }] },
    ...targets.map((t) => ({ toolCalls: [t] })),
    ...after,
    { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
  ]);
  const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "write", profileId });
  const { events, asked } = await followDenyingApprovals(main, taskId);
  check(
    "an ordinary file is auto-approved (control)",
    finishedById(events).get("ok")?.ok === true && !asked.some((d) => d.includes("notes.md")),
    JSON.stringify(asked).slice(0, 300),
  );
  for (const t of targets)
    check(
      `${t.name} ${t.input.path} was asked for`,
      asked.some((d) => d.includes(t.input.path)),
      JSON.stringify(asked).slice(0, 300),
    );
  return { events, asked };
}

describe("code runs only when someone approved it", () => {
  attack(
    "a repository's git config (core.fsmonitor, includes) runs nothing when a task lists or searches files, even once the model planted it",
    async () => {
      const ws = newWorkspace(main, "fsmonitor", { "src/hello.txt": "hello there\n" });
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", ...args], { cwd: ws, stdio: "pipe" });
      git("add", "-A");
      git("commit", "-qm", "init");
      const ran = path.join(path.dirname(ws), "FSMONITOR_RAN");
      const included = path.join(path.dirname(ws), "INCLUDED_RAN");
      const planted = path.join(path.dirname(ws), "PLANTED_RAN");
      fs.writeFileSync(
        path.join(path.dirname(ws), "evil.gitconfig"),
        `[core]\n\tfsmonitor = "touch ${included}; false"\n`,
      );
      git("config", "core.fsmonitor", `touch ${ran}; false`);
      git("config", "core.untrackedCache", "true");
      git("config", "include.path", path.join(path.dirname(ws), "evil.gitconfig"));
      const config = fs.readFileSync(path.join(ws, ".git", "config"), "utf8");
      await autoApprove(main, { readFiles: true, editFiles: true });
      const { profileId } = await scripted(main, [
        {
          toolCalls: [
            { id: "list", name: "list_files", input: { path: ".", recursive: true } },
            { id: "search", name: "search_files", input: { path: ".", regex: "hello" } },
          ],
        },
        // The model plants its own fsmonitor (edit auto-approval only), then searches again.
        {
          toolCalls: [
            {
              id: "plant",
              name: "write_to_file",
              input: { path: ".git/config", content: `${config}[core]\n\tfsmonitor = "touch ${planted}; false"\n` },
            },
          ],
        },
        {
          toolCalls: [
            { id: "search2", name: "search_files", input: { path: "src", regex: "hello" } },
            { id: "list2", name: "list_files", input: { path: "src", recursive: true } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "look around", profileId });
      const asked: string[] = [];
      const events = await follow(main, taskId, 60_000, async (e) => {
        if (e.event.case !== "ask") return;
        asked.push(e.event.value.detail);
        await main.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true });
      });
      const finished = finishedById(events);
      check(
        "the listing ran (control)",
        finished.get("list")?.ok === true && finished.get("list")!.result.includes("src/hello.txt"),
        finished.get("list")?.result.slice(0, 200),
      );
      check(
        "the search ran (control)",
        finished.get("search")?.ok === true && finished.get("search")!.result.includes("src/hello.txt:1"),
        finished.get("search")?.result.slice(0, 200),
      );
      check(
        "the second search ran (control)",
        finished.get("search2")?.ok === true && finished.get("search2")!.result.includes("hello"),
        finished.get("search2")?.result.slice(0, 200),
      );
      check("the repository's core.fsmonitor never ran", !fs.existsSync(ran));
      check("the fsmonitor of an included config never ran", !fs.existsSync(included));
      check("the model's planted core.fsmonitor never ran", !fs.existsSync(planted));
      check(
        "writing .git/config was asked for, though edits are auto-approved",
        asked.length === 1 && nth(asked, 0, "approval asked").includes(".git/config"),
        JSON.stringify(asked).slice(0, 200),
      );
      check("the task completed", lastStatus(events) === TaskStatus.COMPLETED);
    },
  );

  attack(
    "writes to .git internals (config, hooks, info/attributes, through a symlink too) are never auto-approved",
    async () => {
      const ws = newWorkspace(main, "gitwrites");
      fs.symlinkSync(".git", path.join(ws, "innocent-folder"));
      const config = fs.readFileSync(path.join(ws, ".git", "config"), "utf8");
      await autoApprove(main, { readFiles: true, editFiles: true });
      const targets = [
        { id: "cfg", name: "write_to_file", input: { path: ".git/config", content: `${config}# touched\n` } },
        {
          id: "hook",
          name: "write_to_file",
          input: { path: ".git/hooks/pre-commit", content: "#!/bin/sh\ntouch PWNED\n" },
        },
        { id: "attr", name: "write_to_file", input: { path: ".git/info/attributes", content: "* filter=evil\n" } },
        {
          id: "repl",
          name: "replace_in_file",
          input: { path: ".git/config", diff: "------- SEARCH\n# touched\n=======\n# again\n+++++++ REPLACE" },
        },
        {
          id: "link",
          name: "write_to_file",
          input: { path: "innocent-folder/hooks/post-merge", content: "#!/bin/sh\n" },
        },
        { id: "case", name: "write_to_file", input: { path: "./.GIT/hooks-x", content: "x\n" } },
      ];
      const { profileId } = await scripted(main, [
        {
          toolCalls: [
            { id: "ok", name: "write_to_file", input: { path: "src/ok.txt", content: "fine\n" } },
            ...targets,
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "write", profileId });
      const asked: string[] = [];
      const events = await follow(main, taskId, 60_000, async (e) => {
        if (e.event.case !== "ask") return;
        asked.push(e.event.value.detail);
        await main.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true });
      });
      check(
        "the ordinary edit was auto-approved (control)",
        fs.readFileSync(path.join(ws, "src/ok.txt"), "utf8") === "fine\n" &&
          !asked.some((d) => d.includes("src/ok.txt")),
      );
      for (const t of targets) {
        check(
          `${t.name} ${t.input.path} was asked for`,
          asked.some((d) => d.includes(JSON.stringify(t.input.path).slice(1, -1))),
          JSON.stringify(asked).slice(0, 300),
        );
      }
      check(
        "approved, they ran (control)",
        fs.existsSync(path.join(ws, ".git/hooks/pre-commit")) && finishedById(events).get("link")?.ok === true,
      );
    },
  );
});

describe("a trusted workspace runs only the hooks and MCP servers the person let in", () => {
  attack(
    "with edits auto-approved, writing a hook or an MCP server (through a symlink, in a nested folder, in capitals too) is asked for; denied, nothing of it runs",
    async () => {
      const ws = newWorkspace(main, "agents-writes", { "src/a.txt": "a\n" });
      const marks = path.join(path.dirname(ws), "agents-marks");
      fs.mkdirSync(marks);
      // A hook the person has (harmless, executable: a rewrite keeps the mode), and trust given to it.
      const hook = path.join(ws, ".agents", "hooks", "PostToolUse");
      fs.mkdirSync(path.dirname(hook), { recursive: true });
      fs.writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
      fs.symlinkSync(".agents", path.join(ws, "tools"));
      await main.clients.settings.trustWorkspace({ workspaceRoot: ws, trusted: true });
      await autoApprove(main, { readFiles: true, editFiles: true });
      const server = (name: string) =>
        JSON.stringify({ mcpServers: { [name]: { command: "sh", args: ["-c", `touch ${marks}/${name}; sleep 30`] } } });
      const targets = [
        { id: "mcp", name: "write_to_file", input: { path: ".agents/mcp/pwn.json", content: server("mcp") } },
        {
          id: "hook",
          name: "write_to_file",
          input: { path: ".agents/hooks/PostToolUse", content: `#!/bin/sh\ntouch ${marks}/hook\n` },
        },
        {
          id: "repl",
          name: "replace_in_file",
          input: {
            path: ".agents/hooks/PostToolUse",
            diff: `------- SEARCH\nexit 0\n=======\ntouch ${marks}/repl\n+++++++ REPLACE`,
          },
        },
        { id: "link", name: "write_to_file", input: { path: "tools/mcp/linked.json", content: server("link") } },
        { id: "case", name: "write_to_file", input: { path: ".AGENTS/MCP/upper.json", content: server("case") } },
        {
          id: "nested",
          name: "write_to_file",
          input: { path: "packages/app/.agents/hooks/TaskComplete", content: `#!/bin/sh\ntouch ${marks}/nested\n` },
        },
      ];
      const { profileId } = await scripted(main, [
        {
          toolCalls: [
            { id: "ok", name: "write_to_file", input: { path: "src/ok.txt", content: "fine\n" } },
            { id: "rule", name: "write_to_file", input: { path: ".agents/rules/style.md", content: "Be brief.\n" } },
          ],
        },
        ...targets.map((t) => ({ toolCalls: [t] })),
        // A turn after the writes: hooks and servers as they are on disk now would run here.
        { toolCalls: [{ id: "read", name: "read_file", input: { path: "src/a.txt" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "write", profileId });
      const { events, asked } = await followDenyingApprovals(main, taskId);
      const finished = finishedById(events);
      check(
        "the ordinary edit and a rule were auto-approved (control)",
        finished.get("ok")?.ok === true &&
          finished.get("rule")?.ok === true &&
          !asked.some((d) => d.includes("src/ok.txt") || d.includes("style.md")),
        JSON.stringify(asked).slice(0, 300),
      );
      for (const t of targets)
        check(
          `${t.name} ${t.input.path} was asked for`,
          asked.some((d) => d.includes(JSON.stringify(t.input.path).slice(1, -1))),
          JSON.stringify(asked).slice(0, 300),
        );
      check("the person's hook is unchanged", fs.readFileSync(hook, "utf8") === "#!/bin/sh\nexit 0\n");
      check("no MCP server file was written", !fs.existsSync(path.join(ws, ".agents", "mcp")));
      // Give a server that would have started the time to leave its mark.
      await new Promise((resolve) => setTimeout(resolve, 500));
      check("nothing the model wrote ran", fs.readdirSync(marks).length === 0, fs.readdirSync(marks).join(","));
    },
  );
});

describe("what the repository's git config makes git run from the work tree is protected", () => {
  attack(
    "with edits auto-approved, writing the core.hooksPath folder (husky's scripts too) or a file include.path names is asked for; denied, git runs nothing of it",
    async () => {
      const ws = newWorkspace(main, "git-named", { "src/a.txt": "a\n" });
      const marks = path.join(path.dirname(ws), "git-named-marks");
      fs.mkdirSync(marks);
      // The repository's own config: hooks kept in .githooks (not created yet) and two included
      // config files of the work tree.
      fs.appendFileSync(
        path.join(ws, ".git", "config"),
        '[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../team.gitconfig\n[includeIf "gitdir:/"]\n\tpath = "../conf/extra.gitconfig" # team\n',
      );
      await autoApprove(main, { readFiles: true, editFiles: true });
      const targets = [
        {
          id: "hook",
          name: "write_to_file",
          input: { path: ".githooks/pre-commit", content: `#!/bin/sh\ntouch ${marks}/hook\n` },
        },
        {
          id: "inc",
          name: "write_to_file",
          input: { path: "team.gitconfig", content: `[core]\n\tpager = touch ${marks}/inc\n` },
        },
        {
          id: "incif",
          name: "write_to_file",
          input: { path: "conf/extra.gitconfig", content: `[core]\n\tfsmonitor = touch ${marks}/incif\n` },
        },
      ];
      await writesAskedFor(ws, targets);
      for (const t of targets) check(`${t.input.path} was not written`, !fs.existsSync(path.join(ws, t.input.path)));
      // The person's next commit runs the hooks folder's pre-commit and reads the includes.
      execFileSync(
        "git",
        ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "next"],
        {
          cwd: ws,
          stdio: "pipe",
        },
      );
      // husky v9: core.hooksPath is .husky/_, whose shims run the scripts in .husky/ itself.
      const husky = newWorkspace(main, "husky", { ".husky/pre-commit": "npm test\n", "src/a.txt": "a\n" });
      fs.appendFileSync(path.join(husky, ".git", "config"), "[core] hooksPath = .husky/_\n");
      const second = await scripted(main, [
        {
          toolCalls: [
            {
              id: "husky",
              name: "write_to_file",
              input: { path: ".husky/pre-commit", content: `touch ${marks}/husky\n` },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const run = await main.clients.tasks.newTask({
        workspaceRoot: husky,
        text: "write",
        profileId: second.profileId,
      });
      const huskyRun = await followDenyingApprovals(main, run.taskId);
      check(
        "husky's .husky/pre-commit was asked for",
        huskyRun.asked.some((d) => d.includes(".husky/pre-commit")),
      );
      check(
        "husky's script is unchanged",
        fs.readFileSync(path.join(husky, ".husky/pre-commit"), "utf8") === "npm test\n",
      );
      check("nothing the model wrote ran", fs.readdirSync(marks).length === 0, fs.readdirSync(marks).join(","));
    },
  );
});

describe("hooks, MCP servers and git config the loaders reach through links are protected where they really are", () => {
  attack(
    "with edits auto-approved, writing the folder .agents/mcp links to, the script a hook links to, or the git folder a .git file names is asked for; denied, nothing runs",
    async () => {
      const ws = newWorkspace(main, "agents-link-targets", { "config/README.md": "shared config\n" });
      const marks = path.join(path.dirname(ws), "agents-link-marks");
      fs.mkdirSync(marks);
      // The repository's own layout: MCP descriptors kept in config/, a hook that runs a script
      // of the repository, and its git folder elsewhere in the tree (a .git file naming it).
      fs.mkdirSync(path.join(ws, ".agents", "hooks"), { recursive: true });
      fs.symlinkSync("../config", path.join(ws, ".agents", "mcp"));
      fs.mkdirSync(path.join(ws, "scripts"));
      fs.writeFileSync(path.join(ws, "scripts", "check.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
      fs.symlinkSync("../../scripts/check.sh", path.join(ws, ".agents", "hooks", "PreToolUse"));
      fs.renameSync(path.join(ws, ".git"), path.join(ws, "gitstore"));
      fs.writeFileSync(path.join(ws, ".git"), "gitdir: gitstore\n");
      await main.clients.settings.trustWorkspace({ workspaceRoot: ws, trusted: true });
      await autoApprove(main, { readFiles: true, editFiles: true });
      const server = JSON.stringify({ command: "sh", args: ["-c", `touch ${marks}/mcp; sleep 30`] });
      const targets = [
        { id: "mcp", name: "write_to_file", input: { path: "config/evil.json", content: server } },
        {
          id: "hook",
          name: "write_to_file",
          input: { path: "scripts/check.sh", content: `#!/bin/sh\ntouch ${marks}/hook\n` },
        },
        {
          id: "git",
          name: "write_to_file",
          input: { path: "gitstore/config", content: `[core]\n\tfsmonitor = touch ${marks}/git\n` },
        },
      ];
      // A turn after the writes: hooks and servers as they are on disk now would run here.
      await writesAskedFor(ws, targets, [
        { toolCalls: [{ id: "read", name: "read_file", input: { path: "config/README.md" } }] },
      ]);
      check(
        "the hook's script is unchanged",
        fs.readFileSync(path.join(ws, "scripts", "check.sh"), "utf8") === "#!/bin/sh\nexit 0\n",
      );
      check("no MCP descriptor was written", !fs.existsSync(path.join(ws, "config", "evil.json")));
      await new Promise((resolve) => setTimeout(resolve, 500));
      check("nothing the model wrote ran", fs.readdirSync(marks).length === 0, fs.readdirSync(marks).join(","));
    },
  );
});

describe("the core's own storage is out of the tools' reach", () => {
  attack(
    "a workspace at the home folder: the model reads no key, rewrites no setting and runs no command without an ask",
    async () => {
      const roots = makeTestRoots("dline-sec-home-");
      const ws = roots.home;
      // The default layout under the home folder: ~/.dline (data and resource home) and ~/Documents/dline.
      Object.assign(roots.env, {
        DLINE_DIR: path.join(ws, ".dline"),
        DLINE_HOME_DIR: path.join(ws, ".dline"),
        DLINE_DOCS_DIR: path.join(ws, "Documents", "dline"),
      });
      fs.writeFileSync(path.join(ws, "notes.txt"), "my notes\n");
      const sidecar = await startSidecar({ roots });
      sidecars.push(sidecar);
      await autoApprove(sidecar, { readFiles: true, editFiles: true, executeSafeCommands: true });
      const settingsFile = path.join(ws, ".dline", "data", "settings", "settings.json");
      const evilSettings = JSON.stringify({
        autoApprovalSettings: { enabled: true, executeAllCommands: true, maxRequests: 100 },
      });
      fs.symlinkSync(path.join(ws, ".dline", "data"), path.join(ws, "innocent"));
      const calls = [
        { id: "key", name: "read_file", input: { path: ".dline/data/secrets/api_keys.json" } },
        {
          id: "key-abs",
          name: "read_file",
          input: { path: path.join(ws, ".dline", "data", "secrets", "api_keys.json") },
        },
        { id: "key-link", name: "read_file", input: { path: "innocent/secrets/api_keys.json" } },
        {
          id: "set",
          name: "write_to_file",
          input: { path: ".dline/data/settings/settings.json", content: evilSettings },
        },
        {
          id: "set-dots",
          name: "write_to_file",
          input: { path: "Documents/../.dline/data/settings/./settings.json", content: evilSettings },
        },
        {
          id: "set-link",
          name: "write_to_file",
          input: { path: "innocent/settings/settings.json", content: evilSettings },
        },
        {
          id: "set-repl",
          name: "replace_in_file",
          input: { path: ".dline/data/settings/settings.json", diff: "------- SEARCH\n\n=======\nx\n+++++++ REPLACE" },
        },
        { id: "db", name: "read_file", input: { path: "Documents/dline/tasks/taskHistory.db" } },
        { id: "log", name: "read_file", input: { path: ".dline/logs/dline-core.log" } },
        { id: "ls-root", name: "list_files", input: { path: ".dline", recursive: true } },
        { id: "ls-docs", name: "list_files", input: { path: "Documents/dline", recursive: false } },
        { id: "search-root", name: "search_files", input: { path: ".dline", regex: "sk-" } },
        // Allowed calls over the whole home folder must leave the core's folders out.
        { id: "ls-all", name: "list_files", input: { path: ".", recursive: true } },
        { id: "ls-top", name: "list_files", input: { path: ".", recursive: false } },
        { id: "search-all", name: "search_files", input: { path: ".", regex: "sk-tool-|executeAllCommands|notes" } },
      ];
      const { profileId, server } = await scripted(sidecar, [
        { toolCalls: calls },
        {
          toolCalls: [
            { id: "cmd", name: "execute_command", input: { command: "touch PWNED", requires_approval: true } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const before = fs.readFileSync(settingsFile, "utf8");
      const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: ws, text: "go", profileId });
      let commandAsked = false;
      const events = await follow(sidecar, taskId, 60_000, async (e) => {
        if (e.event.case !== "ask") return;
        if (e.event.value.kind === AskKind.COMMAND_APPROVAL) commandAsked = true;
        await sidecar.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: false });
      });
      const finished = finishedById(events);
      for (const c of calls.slice(0, 12)) {
        const f = finished.get(c.id);
        check(
          `${c.name} ${JSON.stringify(c.input.path)} is refused`,
          f !== undefined && !f.ok && /Dline's own storage/.test(f.result),
          f?.result.slice(0, 200),
        );
      }
      const all = finished.get("ls-all");
      check(
        "the home folder is listed (control)",
        all?.ok === true && all.result.includes("notes.txt"),
        all?.result.slice(0, 200),
      );
      check(
        "the listing leaves the core's folders out",
        all !== undefined &&
          !/(^|\n)(\.dline|Documents\/dline)\//.test(all.result) &&
          !(finished.get("ls-top")?.result ?? "").includes(".dline"),
        all?.result.slice(0, 300),
      );
      const search = finished.get("search-all");
      check(
        "the search ran (control)",
        search?.ok === true && search.result.includes("notes.txt"),
        search?.result.slice(0, 200),
      );
      check(
        "the search found nothing in the core's folders",
        search !== undefined && !search.result.includes(".dline/") && !search.result.includes("Documents/dline"),
        search?.result.slice(0, 300),
      );
      check("the settings file is unchanged", fs.readFileSync(settingsFile, "utf8") === before);
      const approval = await sidecar.clients.settings.resolveSetting({ key: "autoApprovalSettings" });
      check(
        "executeAllCommands is still off",
        !JSON.stringify(approval.value).includes('"executeAllCommands":true'),
        JSON.stringify(approval.value),
      );
      check("the command marked requires_approval was asked for", commandAsked);
      check("the command did not run", !fs.existsSync(path.join(ws, "PWNED")));
      const requests = await server.requests();
      check("the model got the tool results (control)", requests.length >= 2);
      check("the key never reached the model", !requests.some((r) => JSON.stringify(r.body).includes(SECRET)));
    },
  );
});

describe("the sidecar stays responsive whatever the model asks for", () => {
  attack(
    "a catastrophic regex (^(a+)+$) and a minified line neither freeze Health nor lose the results found",
    async () => {
      const ws = newWorkspace(main, "regex", {
        "0-first.txt": "aaaa\n",
        "z-evil.txt": `${"a".repeat(48)}!\n`,
        "min.js": `${"function x(){return 1};".repeat(1400)}\n`,
      });
      await autoApprove(main, { readFiles: true });
      const { profileId } = await scripted(main, [
        {
          toolCalls: [
            { id: "evil", name: "search_files", input: { path: ".", regex: "^(a+)+$", file_pattern: "*.txt" } },
          ],
        },
        {
          toolCalls: [{ id: "minified", name: "search_files", input: { path: ".", regex: "function.*return.*NOPE" } }],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "search", profileId });
      // When the evil search starts, ask for Health: it must answer before the search ends.
      let health: Promise<string> | undefined;
      let healthAnswered = false;
      let healthBeforeSearchEnded = false;
      const events = await follow(main, taskId, 60_000, (e) => {
        if (e.event.case === "toolStarted" && e.event.value.toolCallId === "evil") {
          health = main.clients.system.health({}).then((h) => {
            healthAnswered = true;
            return h.status;
          });
        }
        if (e.event.case === "toolFinished" && e.event.value.toolCallId === "evil")
          healthBeforeSearchEnded = healthAnswered;
      });
      check(
        "Health answered while the regex ran",
        healthBeforeSearchEnded && (await withDeadline(health ?? Promise.resolve(""), 10_000)) === "ok",
      );
      const finished = finishedById(events);
      const evil = finished.get("evil");
      check(
        "the evil search ended with the results found before it stopped",
        evil?.ok === true && evil.result.includes("0-first.txt:1: aaaa") && /stopped after/.test(evil.result),
        evil?.result.slice(0, 300),
      );
      const minified = finished.get("minified");
      check(
        "the minified line was skipped, and the result says so",
        minified?.ok === true && /longer than \d+ characters/.test(minified.result),
        minified?.result.slice(0, 300),
      );
      check("the task completed", lastStatus(events) === TaskStatus.COMPLETED);
    },
  );
});

describe("special files and stuck tools", () => {
  attack("FIFOs in the workspace hang no tool, no task and no other call", async () => {
    const ws = newWorkspace(main, "fifo", { "src/real.txt": "real\n" });
    const fifos = ["p1", "p2", "p3", "p4", "src/p5"];
    for (const f of fifos) execFileSync("mkfifo", [path.join(ws, f)]);
    // Files of the repository the core reads by itself, as FIFOs too. (Not .gitignore or
    // .gitattributes: the checkpoints' git reads those itself.)
    fs.mkdirSync(path.join(ws, ".agents", "rules"), { recursive: true });
    for (const f of [".agentignore", ".clineignore", ".agents/rules/evil.md"])
      execFileSync("mkfifo", [path.join(ws, f)]);
    await autoApprove(main, { readFiles: true, editFiles: true });
    const calls = [
      ...fifos.slice(0, 4).map((f) => ({ id: `read-${f}`, name: "read_file", input: { path: f } })),
      {
        id: "replace",
        name: "replace_in_file",
        input: { path: "src/p5", diff: "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE" },
      },
      { id: "write", name: "write_to_file", input: { path: "p1", content: "over a fifo\n" } },
      { id: "search", name: "search_files", input: { path: ".", regex: "real" } },
      { id: "list", name: "list_files", input: { path: ".", recursive: true } },
    ];
    const { profileId } = await scripted(main, [
      { toolCalls: calls },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "read the pipes", profileId });
    const events = await follow(main, taskId, 30_000);
    check("the task completed", lastStatus(events) === TaskStatus.COMPLETED, `status ${String(lastStatus(events))}`);
    const finished = finishedById(events);
    for (const c of calls.slice(0, 6)) {
      const f = finished.get(c.id);
      check(
        `${c.name} ${c.input.path} is refused as a named pipe`,
        f !== undefined && !f.ok && /named pipe/.test(f.result),
        f?.result.slice(0, 200),
      );
    }
    check(
      "the search skipped the pipes and found the file (control)",
      finished.get("search")?.ok === true && finished.get("search")!.result.includes("src/real.txt:1"),
    );
    check(
      "the listing leaves the pipes out",
      finished.get("list")?.ok === true && !/\bp[1-5]\b/.test(finished.get("list")!.result),
      finished.get("list")?.result,
    );
    check(
      "the pipes are still pipes",
      fifos.every((f) => fs.lstatSync(path.join(ws, f)).isFIFO()),
    );
    // Every other call still answers (blocked opens used to take all of libuv's threads).
    const other = newWorkspace(main, "fifo-other");
    check(
      "ListCapabilities answers",
      (await withDeadline(main.clients.settings.listCapabilities({ workspaceRoot: other }), 10_000)) !== undefined,
    );
    const { profileId: p2 } = await scripted(main, [{ text: "hi" }]);
    check(
      "NewTask answers",
      (await withDeadline(main.clients.tasks.newTask({ workspaceRoot: other, text: "hi", profileId: p2 }), 10_000)) !==
        undefined,
    );
  });

  attack("Cancel ends a task whose command ignores SIGTERM and keeps its output open", async () => {
    const ws = newWorkspace(main, "cancel");
    await autoApprove(main, { executeSafeCommands: true, executeAllCommands: true });
    const pidFile = path.join(path.dirname(ws), "stubborn.pid");
    const command = `trap "" TERM; (trap "" TERM; while :; do sleep 0.2; done) & echo $! > ${pidFile}; echo started; while :; do sleep 0.2; done`;
    const { profileId } = await scripted(main, [
      { toolCalls: [{ id: "cmd", name: "execute_command", input: { command, requires_approval: false } }] },
    ]);
    const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "run", profileId });
    let started = false;
    const following = follow(main, taskId, 60_000, (e) => {
      if (e.event.case === "toolOutput" && e.event.value.chunk.includes("started")) started = true;
    });
    check("the command started (control)", await waitFor(() => started, 20_000));
    const t0 = Date.now();
    const cancelled = await withDeadline(main.clients.tasks.cancel({ taskId }), 10_000);
    const elapsed = Date.now() - t0;
    const events = await following;
    console.log(`security: Cancel of a command that ignores SIGTERM returned after ${elapsed} ms`);
    check("Cancel returned", cancelled !== undefined);
    check("the task is cancelled", lastStatus(events) === TaskStatus.CANCELLED, `status ${String(lastStatus(events))}`);
    const pid = Number(fs.readFileSync(pidFile, "utf8"));
    check("the command's background child is gone", await waitFor(() => !isRunning(pid), 5_000));
  });

  attack("a 300-character path component fails the tool call, not the task", async () => {
    const ws = newWorkspace(main, "longname");
    await autoApprove(main, { readFiles: true, editFiles: true });
    const long = "n".repeat(300);
    const calls = [
      { id: "read", name: "read_file", input: { path: `${long}.txt` } },
      { id: "write", name: "write_to_file", input: { path: `src/${long}/x.txt`, content: "x\n" } },
      { id: "list", name: "list_files", input: { path: long, recursive: true } },
      { id: "search", name: "search_files", input: { path: long, regex: "x" } },
      {
        id: "replace",
        name: "replace_in_file",
        input: { path: `${long}.txt`, diff: "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE" },
      },
    ];
    const { profileId } = await scripted(main, [
      { toolCalls: calls },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "long names", profileId });
    const events = await follow(main, taskId, 30_000);
    check(
      "the task completed",
      lastStatus(events) === TaskStatus.COMPLETED,
      events
        .filter((e) => e.event.case === "error")
        .map((e) => toJsonString(TaskEventSchema, e))
        .join(" ")
        .slice(0, 300),
    );
    const finished = finishedById(events);
    for (const c of calls) {
      const f = finished.get(c.id);
      check(`${c.name} with a 300-character name is a failed call`, f !== undefined && !f.ok, f?.result.slice(0, 200));
    }
  });
});

describe("a command auto-approved as safe cannot read where the keys are", () => {
  attack(
    "with safe commands auto-approved, a plain command reading /proc (the sidecar's environment) or the stored keys is asked for; denied, no key in any form reaches the model",
    async () => {
      const envKey = `sk-env-${Math.random().toString(36).slice(2)}-IN-THE-ENVIRONMENT`;
      const roots = makeTestRoots("dline-sec-proc-");
      roots.env.ANTHROPIC_API_KEY = envKey;
      const sidecar = await startSidecar({ roots });
      sidecars.push(sidecar);
      const ws = newWorkspace(sidecar, "proc", { "src/a.txt": "a\n" });
      await autoApprove(sidecar, { readFiles: true, executeSafeCommands: true });
      const stored = path.join(sidecar.roots.dlineDir, "data", "secrets", "api_keys.json");
      const targets = [
        "base64 -w0 /proc/$PPID/environ",
        "strings /proc/*/environ",
        "od -c /proc/self/../$PPID/env*",
        `rev ${stored}`,
        "grep -r sk- $DLINE_DIR",
        `base64 ${path.relative(ws, stored)}`,
        "ls /",
      ];
      const { profileId, server } = await scripted(sidecar, [
        { toolCalls: [{ id: "ok", name: "execute_command", input: { command: "ls src", requires_approval: false } }] },
        ...targets.map((command, i) => ({
          toolCalls: [{ id: `t${i}`, name: "execute_command", input: { command, requires_approval: false } }],
        })),
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: ws, text: "look around", profileId });
      const asked: string[] = [];
      const events = await follow(sidecar, taskId, 60_000, async (e) => {
        if (e.event.case !== "ask") return;
        const approval = e.event.value.kind === AskKind.COMMAND_APPROVAL;
        if (approval) asked.push(e.event.value.detail);
        await sidecar.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: !approval });
      });
      check(
        "a plain command in the workspace is auto-approved (control)",
        finishedById(events).get("ok")?.ok === true && !asked.some((d) => d.includes("ls src")),
        JSON.stringify(asked).slice(0, 300),
      );
      for (const command of targets)
        check(
          `${command} was asked for`,
          asked.some((d) => d.includes(command)),
          JSON.stringify(asked).slice(0, 300),
        );
      const bodies = (await server.requests()).map((r) => JSON.stringify(r.body)).join("\n");
      for (const key of [envKey, SECRET]) {
        const forms = [
          key,
          [...key].reverse().join(""),
          Buffer.from(`ANTHROPIC_API_KEY=${key}`).toString("base64").slice(8, 40),
        ];
        check("no form of a key reached the model", !forms.some((form) => bodies.includes(form)));
      }
    },
  );
});

describe("a read the tools would refuse is never put to the person", () => {
  attack(
    "read_file, list_files and search_files through a link leading outside, or outside the workspace, are refused without an ask",
    async () => {
      const ws = newWorkspace(main, "read-refused", { "src/a.txt": "a\n" });
      const outside = path.join(path.dirname(ws), "read-refused-outside");
      fs.mkdirSync(outside, { recursive: true });
      fs.writeFileSync(path.join(outside, "secret.txt"), "TOPSECRET\n");
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "link-secret.txt"));
      fs.symlinkSync(outside, path.join(ws, "elsewhere"));
      await autoApprove(main, {});
      const targets = [
        { id: "link", name: "read_file", input: { path: "link-secret.txt" } },
        { id: "dots", name: "read_file", input: { path: "../read-refused-outside/secret.txt" } },
        { id: "list", name: "list_files", input: { path: "elsewhere" } },
        { id: "search", name: "search_files", input: { path: "elsewhere", regex: "TOP" } },
      ];
      const { profileId, server } = await scripted(main, [
        ...targets.map((t) => ({ toolCalls: [t] })),
        { toolCalls: [{ id: "ok", name: "read_file", input: { path: "src/a.txt" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "read", profileId });
      const asked: string[] = [];
      const events = await follow(main, taskId, 30_000, async (e) => {
        if (e.event.case !== "ask") return;
        if (e.event.value.kind === AskKind.TOOL_APPROVAL) asked.push(e.event.value.summary);
        await main.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true });
      });
      const finished = finishedById(events);
      check(
        "the read inside the workspace was asked for (control)",
        asked.length === 1 && asked[0]!.includes("src/a.txt"),
        JSON.stringify(asked),
      );
      for (const t of targets)
        check(
          `${t.name} ${t.input.path} was refused`,
          finished.get(t.id)?.ok === false,
          JSON.stringify(finished.get(t.id)),
        );
      check(
        "nothing outside reached the model",
        !JSON.stringify((await server.requests()).map((r) => r.body)).includes("TOPSECRET"),
      );
    },
  );
});

describe("stored secrets never leave a tool's output", () => {
  attack(
    "a stored API key in a file or a command's output is redacted before the model, the events, the messages and the logs",
    async () => {
      const half = Math.floor(SECRET.length / 2);
      const ws = newWorkspace(main, "redact", { ".env": `API_KEY=${SECRET}\n`, "src/config.txt": `key: ${SECRET}\n` });
      await autoApprove(main, { readFiles: true, executeSafeCommands: true, executeAllCommands: true });
      const split = `printf 'KEY=%s' '${SECRET.slice(0, half)}'; sleep 0.3; printf '%s\\n' '${SECRET.slice(half)}'; cat .env`;
      const { profileId, server } = await scripted(main, [
        {
          toolCalls: [
            { id: "read", name: "read_file", input: { path: ".env" } },
            { id: "search", name: "search_files", input: { path: ".", regex: "key" } },
            { id: "cmd", name: "execute_command", input: { command: split, requires_approval: false } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "show me the config", profileId });
      const events = await follow(main, taskId, 30_000);
      check("the task completed", lastStatus(events) === TaskStatus.COMPLETED);
      const finished = finishedById(events);
      check(
        "the tools ran and show [redacted] (control)",
        ["read", "search", "cmd"].every(
          (id) => finished.get(id)?.ok && finished.get(id)!.result.includes("[redacted]"),
        ),
        JSON.stringify([...finished.values()]).slice(0, 400),
      );
      const requests = await server.requests();
      check(
        "the model got the results (control)",
        requests.length === 2 && JSON.stringify(recorded(requests, 1).body).includes("[redacted]"),
      );
      check(
        "no request body sent to the model holds the key",
        !requests.some((r) => JSON.stringify(r.body).includes(SECRET)),
      );
      check("no task event holds the key", !events.some((e) => toJsonString(TaskEventSchema, e).includes(SECRET)));
      const stored = await main.clients.tasks.getTask({ taskId });
      check(
        "no stored message holds the key",
        !JSON.stringify(stored.messages.map((m) => [m.text, m.detail])).includes(SECRET),
      );
      const taskDir = path.join(main.roots.docsDir, "tasks", taskId);
      const logs = path.join(taskDir, "tmp", "command-logs");
      const logText = fs
        .readdirSync(logs)
        .map((f) => fs.readFileSync(path.join(logs, f), "utf8"))
        .join("\n");
      check("the command log was written (control)", logText.includes("KEY=[redacted]"), logText.slice(0, 300));
      check("the command log holds no key", !logText.includes(SECRET));
    },
  );
});
