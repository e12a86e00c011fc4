import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  CheckpointManager,
  type CheckpointManagerOptions,
  type TaskConversationPort,
} from "../../core/src/checkpoints/index.js";
import { silentLogger } from "../../core/src/logging/logger.js";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { expect } from "vitest";
import { nth } from "../helpers/items.js";

/** A temp folder with isolated Dline roots, a HOME and a project folder. */
export interface Sandbox {
  base: string;
  home: string;
  workspace: string;
  layout: InstanceLayout;
  env: NodeJS.ProcessEnv;
}

export function makeSandbox(): Sandbox {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "dline-cp-")));
  const home = path.join(base, "home");
  const workspace = path.join(home, "projects", "my project");
  fs.mkdirSync(workspace, { recursive: true });
  const layout = new InstanceLayout({
    dataRoot: path.join(base, "data"),
    homeRoot: path.join(base, "dline-home"),
    documentsRoot: path.join(base, "docs"),
  });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: os.tmpdir() };
  return { base, home, workspace, layout, env };
}

export function makeManager(sb: Sandbox, extra: Partial<CheckpointManagerOptions> = {}): CheckpointManager {
  return new CheckpointManager({ layout: sb.layout, env: sb.env, homeDir: sb.home, logger: silentLogger(), ...extra });
}

export function write(root: string, rel: string, content: string | Buffer): void {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

export function read(root: string, rel: string): string | undefined {
  try {
    return fs.readFileSync(path.join(root, rel), "utf8");
  } catch {
    return undefined;
  }
}

/** Runs the system git on a test's own repository (not the shadow one). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "User",
      GIT_AUTHOR_EMAIL: "user@example.com",
      GIT_COMMITTER_NAME: "User",
      GIT_COMMITTER_EMAIL: "user@example.com",
      GIT_ALLOW_PROTOCOL: "file",
    },
    encoding: "utf8",
  });
}

/** Every file under `dir` (including .git folders) with its content hash and mode. */
export function treeDigest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isDirectory()) {
        out[rel + "/"] = "dir";
        walk(p);
      } else if (e.isSymbolicLink()) {
        out[rel] = `link:${fs.readlinkSync(p)}`;
      } else {
        const st = fs.statSync(p);
        out[rel] = `${(st.mode & 0o777).toString(8)}:${createHash("sha256").update(fs.readFileSync(p)).digest("hex")}`;
      }
    }
  };
  walk(dir);
  return out;
}

/**
 * The conversation side, implemented with real files the way the task store will: one JSON
 * file per task with its messages; rewinding deletes the messages after a point.
 */
export class FileConversation implements TaskConversationPort {
  constructor(
    private readonly dir: string,
    private readonly roots: Record<string, string[]>,
  ) {
    fs.mkdirSync(dir, { recursive: true });
  }
  private file(taskId: string) {
    return path.join(this.dir, `${taskId}.json`);
  }
  messages(taskId: string): { id: string; text: string; createdAt: number }[] {
    try {
      return JSON.parse(fs.readFileSync(this.file(taskId), "utf8"));
    } catch {
      return [];
    }
  }
  addMessage(taskId: string, id: string, text: string): void {
    const all = this.messages(taskId);
    all.push({ id, text, createdAt: Date.now() });
    fs.writeFileSync(this.file(taskId), JSON.stringify(all));
  }
  async workspaceRootsOf(taskId: string) {
    return this.roots[taskId];
  }
  async rewindConversation(
    taskId: string,
    messageId: string,
    options?: { editedText?: string; beforeMessage?: boolean },
  ) {
    const all = this.messages(taskId);
    const i = all.findIndex((m) => m.id === messageId);
    if (i < 0) throw new Error(`no message ${messageId}`);
    let kept = options?.beforeMessage ? all.slice(0, i) : all.slice(0, i + 1);
    if (options?.editedText !== undefined) kept = [...kept, { ...nth(all, i, "message"), text: options.editedText }];
    fs.writeFileSync(this.file(taskId), JSON.stringify(kept));
  }
  async messageInfo(taskId: string, messageId: string) {
    return this.messages(taskId).find((m) => m.id === messageId);
  }
}

/** Resolves to true when `promise` settles within `ms` (a wait that must not end yet, or must). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}

/** Waits (up to 10 s) until `condition` holds; fails the test otherwise. */
export async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(condition()).toBe(true);
}
