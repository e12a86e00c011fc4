/** The hook contract, run in-process with real executables (the end-to-end path is in file-capabilities.test.ts). */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runHooks } from "../../core/src/capabilities/hook-runner.js";
import { parseFrontMatter, listField } from "../../core/src/capabilities/front-matter.js";
import { isAlive, waitFor, writeFile } from "./helpers.js";
import { nth } from "../helpers/items.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-hooks-"));
const hook = (name: string, body: string) => {
  const file = path.join(dir, name);
  writeFile(file, `#!/bin/sh\n${body}\n`, 0o755);
  return { name, path: file };
};

describe("hook runner", () => {
  it("passes the payload on stdin and the event in the environment; only PreToolUse blocks", async () => {
    const echo = hook("echo.sh", 'echo "$DLINE_HOOK_EVENT: $(cat)"; exit 1');
    const post = await runHooks([echo], "PostToolUse", { tool: "read_file" }, dir);
    expect(post.blocked).toBeUndefined();
    expect(post.runs).toEqual([
      { hook: "echo.sh", exitCode: 1, output: 'PostToolUse: {"tool":"read_file"}\n', timedOut: false },
    ]);
    const pre = await runHooks([echo, hook("never.sh", "echo should not run")], "PreToolUse", { tool: "x" }, dir);
    expect(pre.blocked).toBe('PreToolUse: {"tool":"x"}');
    expect(pre.runs).toHaveLength(1); // a block stops the rest
  });

  it("a JSON block line gives the reason; exit 0 without it allows", async () => {
    const json = hook(
      "json.sh",
      'cat >/dev/null; echo "checking"; echo \'{"block": true, "reason": "not on Fridays"}\'',
    );
    expect((await runHooks([json], "PreToolUse", {}, dir)).blocked).toBe("not on Fridays");
    const allow = hook("allow.sh", "cat >/dev/null; echo '{\"block\": false}'");
    expect((await runHooks([allow], "PreToolUse", {}, dir)).blocked).toBeUndefined();
  });

  it("a hook past its timeout is killed with its children and blocks", async () => {
    const slow = hook("slow.sh", `sleep 30 & echo $! > ${dir}/child.pid; wait`);
    const outcome = await runHooks([slow], "PreToolUse", {}, dir, { timeoutMs: 300 });
    expect(nth(outcome.runs, 0, "run").timedOut).toBe(true);
    expect(outcome.blocked).toContain("timed out");
    const child = Number(fs.readFileSync(path.join(dir, "child.pid"), "utf8"));
    await waitFor(async () => (isAlive(child) ? undefined : true), "the hook's child to be killed");
  });

  it("front matter: strings, inline and block lists, body", () => {
    const parsed = parseFrontMatter(
      '---\nname: "reviewer"\ntools: [read_file, "list_files"]\nmore:\n  - a\n  - b\n---\nBody text\n',
    );
    expect(parsed.fields).toEqual({ name: "reviewer", tools: ["read_file", "list_files"], more: ["a", "b"] });
    expect(parsed.body).toBe("Body text\n");
    expect(listField({ tools: "read_file, list_files" }, "tools")).toEqual(["read_file", "list_files"]);
    expect(parseFrontMatter("no front matter").body).toBe("no front matter");
  });
});
