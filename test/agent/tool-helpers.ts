import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { IgnoreMatcher, loadAgentIgnore } from "../../core/src/agent/tools/ignore-matcher.js";
import { noToolGuard } from "../../core/src/agent/tools/tool-guard.js";
import type { ToolContext } from "../../core/src/agent/tools/types.js";

export interface TestWorkspace {
  root: string;
  /** The temp folder holding the workspace and an "outside" folder next to it. */
  parent: string;
  outside: string;
  write(rel: string, content: string): void;
  read(rel: string): string;
  cleanup(): void;
}

export function makeWorkspace(files: Record<string, string> = {}): TestWorkspace {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "dline-tools-"));
  const root = path.join(parent, "workspace");
  const outside = path.join(parent, "outside");
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "secret.txt"), "top secret\n");
  const ws: TestWorkspace = {
    root,
    parent,
    outside,
    write(rel, content) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), content);
    },
    read: (rel) => fs.readFileSync(path.join(root, rel), "utf8"),
    cleanup: () => fs.rmSync(parent, { recursive: true, force: true }),
  };
  for (const [rel, content] of Object.entries(files)) ws.write(rel, content);
  return ws;
}

export function gitInit(root: string): void {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, stdio: "pipe" });
  git("init", "-q");
  git("-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A");
  git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init", "--allow-empty");
}

export interface TestContext extends ToolContext {
  edited: string[];
  output: string[];
  controller: AbortController;
}

export async function makeContext(root: string, extra: Partial<ToolContext> = {}): Promise<TestContext> {
  const controller = new AbortController();
  const edited: string[] = [];
  const output: string[] = [];
  return {
    workspaceRoot: root,
    signal: controller.signal,
    agentIgnore: fs.existsSync(path.join(root, ".agentignore")) ? await loadAgentIgnore(root) : new IgnoreMatcher(),
    recordEditedPath: (p) => edited.push(p),
    onOutput: (c) => output.push(c),
    guard: noToolGuard,
    ...extra,
    edited,
    output,
    controller,
  };
}
