/**
 * The editors' own clients as followers of a task that runs in another sidecar: the Neovim
 * plugin (its own sidecar over the same roots, headless Neovim, a scripted vim.ui.select) and
 * the CLI (its own sidecar; on a real terminal through util-linux `script`). The TypeScript
 * client kit is the follower of follow-across-sidecars.test.ts.
 */
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { AskKind, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { repoRoot, sidecarBinary, type TestRoots } from "../helpers/sidecar.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { openWindows, readIn, watch, writeThenComplete } from "./follow-helpers.js";
import { nth } from "../helpers/items.js";
import { cliOnTerminal } from "../helpers/terminal.js";

const scope = scopedSidecars();
const nvim = process.env.DLINE_NVIM ?? "nvim";
const cli = path.join(repoRoot, "dist", "dline");

interface NeovimView {
  pid: number;
  seqs: string[];
  statuses: string[];
  prompts: number;
  chat: string;
  notices: { msg: string; level: number }[];
}

/** Headless Neovim with the plugin, over `roots`, running nvim-follower.lua on `taskId`. */
function neovimFollower(
  roots: TestRoots,
  workspace: string,
  taskId: string,
  until: string,
  extra: Record<string, string> = {},
) {
  const out = path.join(roots.base, `nvim-${Date.now()}.json`);
  const xdg = (name: string) => {
    const dir = path.join(roots.base, `xdg-${name}`);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };
  const child = spawn(
    nvim,
    [
      "--headless",
      "--clean",
      "-u",
      path.join(repoRoot, "adapters", "neovim", "tests", "minimal_init.lua"),
      "-c",
      `luafile ${path.join(repoRoot, "test", "tasks", "nvim-follower.lua")}`,
    ],
    {
      cwd: workspace,
      env: {
        ...roots.env,
        XDG_CONFIG_HOME: xdg("config"),
        XDG_DATA_HOME: xdg("data"),
        XDG_STATE_HOME: xdg("state"),
        XDG_CACHE_HOME: xdg("cache"),
        DLINE_CORE: sidecarBinary,
        DLINE_TEST_BASE: roots.base,
        DLINE_FOLLOW_TASK: taskId,
        DLINE_FOLLOW_UNTIL: until,
        DLINE_FOLLOW_OUT: out,
        ...extra,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (output += d.toString("utf8")));
  scope.onCleanup(async () => void child.kill("SIGKILL"));
  return new Promise<NeovimView>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0 || !fs.existsSync(out)) {
        // The plugin's sidecar logs at debug level (nvim-follower.lua): what it did tells why.
        const log = path.join(roots.base, "xdg-cache", "nvim", "dline", "sidecar.log");
        const sidecarLog = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "(no sidecar log)";
        return reject(new Error(`Neovim exited with ${code}:\n${output}\nIts sidecar's log:\n${sidecarLog}`));
      }
      resolve(JSON.parse(fs.readFileSync(out, "utf8")) as NeovimView);
    });
  });
}

describe("editors' clients following a task another sidecar runs", () => {
  it("Neovim opens the task, is asked the owner's question, approves it there, and sees it complete", async () => {
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 1, writeThenComplete());
    const [owner] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const direct = watch(owner.clients, taskId);
    const ask = await direct.ask(AskKind.TOOL_APPROVAL);
    // Neovim opens the task in the middle of its life: after the question was asked.
    const askedAt = direct.events.find((e) => e.event.case === "ask")!.seq;

    const view = await neovimFollower(roots, workspace, taskId, "TASK_STATUS_COMPLETED");
    expect(view.pid).not.toBe(owner.process.handshake.pid);
    expect(view.prompts).toBe(1);
    await direct.status(TaskStatus.COMPLETED);
    expect(direct.events.find((e) => e.event.case === "askResolved")?.event.value).toMatchObject({
      askId: ask.askId,
      approved: true,
    });
    expect(readIn(workspace, "notes.txt")).toBe("written by dline\n");
    // Neovim received the owner's events after what it read with GetTask (the question
    // included), with the owner's seqs: every one of them from there on, once.
    expect(BigInt(nth(view.seqs, 0, "seq"))).toBeGreaterThan(askedAt);
    const owned = direct.events.filter((e) => e.seq >= BigInt(nth(view.seqs, 0, "seq"))).map((e) => e.seq.toString());
    expect(view.seqs).toEqual(owned);
    expect(view.statuses[view.statuses.length - 1]).toBe("TASK_STATUS_COMPLETED");
    expect(view.chat).toContain("Done.");
    await direct.stop();
  });

  it("Neovim, held in its picker while another window approves, then approving too, says the question was answered there (not an error)", async () => {
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 1, writeThenComplete());
    const [owner] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const direct = watch(owner.clients, taskId);
    const ask = await direct.ask(AskKind.TOOL_APPROVAL);
    const ready = path.join(roots.base, "nvim-asked");
    const go = path.join(roots.base, "nvim-go");
    const viewing = neovimFollower(roots, workspace, taskId, "TASK_STATUS_COMPLETED", {
      DLINE_FOLLOW_ANSWER: "late",
      DLINE_FOLLOW_READY: ready,
      DLINE_FOLLOW_GO: go,
    });
    await expect.poll(() => fs.existsSync(ready), { timeout: 60_000 }).toBe(true);
    await owner.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    await direct.until((e) => e.event.case === "askResolved");
    fs.writeFileSync(go, "go");
    const view = await viewing;
    expect(view.notices.map((n) => n.msg).join("\n")).toMatch(/that question was answered in another window/);
    expect(view.notices.filter((n) => n.level >= 4).map((n) => n.msg)).toEqual([]);
    await direct.stop();
  });

  it("Neovim shows the task interrupted when the sidecar running it is killed", async () => {
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 1, writeThenComplete());
    const [owner] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    await watch(owner.clients, taskId).ask(AskKind.TOOL_APPROVAL);
    const ready = path.join(roots.base, "nvim-asked");
    const viewing = neovimFollower(roots, workspace, taskId, "TASK_STATUS_INTERRUPTED", {
      DLINE_FOLLOW_ANSWER: "none",
      DLINE_FOLLOW_READY: ready,
    });
    await expect.poll(() => fs.existsSync(ready), { timeout: 60_000 }).toBe(true);
    process.kill(owner.process.handshake.pid, "SIGKILL");
    const view = await viewing;
    expect(view.statuses).toContain("TASK_STATUS_INTERRUPTED");
    expect(readIn(workspace, "notes.txt")).toBeUndefined();
  });
});

describe("the CLI as a window of its own over the same roots", () => {
  it("dline follow shows the question the task waits on in another sidecar, approves it there, and follows the task to its end", async () => {
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 1, writeThenComplete());
    const [owner] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const direct = watch(owner.clients, taskId);
    const ask = await direct.ask(AskKind.TOOL_APPROVAL);

    const { stdout } = await promisify(execFile)(cli, ["--json", "follow", taskId, "--yes"], {
      env: { ...roots.env, DLINE_CORE: sidecarBinary },
    });
    const [first, ...events] = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(first.pendingAsk.askId).toBe(ask.askId);
    expect(events[events.length - 1].statusChanged.status).toBe("TASK_STATUS_COMPLETED");
    await direct.status(TaskStatus.COMPLETED);
    expect(direct.events.find((e) => e.event.case === "askResolved")?.event.value).toMatchObject({
      askId: ask.askId,
      approved: true,
    });
    expect(readIn(workspace, "notes.txt")).toBe("written by dline\n");
    // The owner's events after the question, with the owner's seqs.
    const after = direct.events.filter((e) => e.seq >= BigInt(events[0].seq)).map((e) => e.seq.toString());
    expect(events.map((e) => e.seq)).toEqual(after);
    await direct.stop();
  });

  it("dline task on a terminal takes its question back when another window answers it, and goes on to the end", async () => {
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 1, writeThenComplete());
    const [other] = sidecars;
    const terminal = cliOnTerminal({ ...roots.env, DLINE_CORE: sidecarBinary }, [
      "task",
      "Write notes.txt",
      "--workspace",
      workspace,
      "--profile",
      profileId,
    ]);
    scope.onCleanup(() => terminal.kill());
    await expect.poll(() => terminal.screen(), { timeout: 60_000 }).toContain("[y/N/feedback]");
    const task = nth((await other.clients.history.listTasks({})).tasks, 0, "listed task");
    const view = await other.clients.tasks.getTask({ taskId: task.id });
    expect(view.ownerPid).not.toBe(other.process.handshake.pid);
    await other.clients.tasks.respond({ taskId: task.id, askId: view.pendingAsk!.askId, approve: true, text: "" });

    const code = await Promise.race([
      terminal.exited,
      new Promise((resolve) => setTimeout(() => resolve("still waiting at its prompt"), 30_000)),
    ]);
    expect(code, terminal.screen()).toBe(0);
    expect(terminal.screen()).toContain("(approved in another window)");
    expect(terminal.screen()).toContain("[completed");
    expect(readIn(workspace, "notes.txt")).toBe("written by dline\n");
  });
});
