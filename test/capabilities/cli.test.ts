/** `dline capabilities`: the CLI's list with toggles, through the real CLI and sidecar binaries. */
import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { writeFile } from "./helpers.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");

describe("dline capabilities", () => {
  it("lists capabilities with their toggles and sets one", async () => {
    const roots = makeTestRoots();
    const env = { ...roots.env, DLINE_CORE: sidecarBinary };
    const ws = path.join(roots.base, "ws");
    writeFile(path.join(ws, ".agents", "rules", "style.md"), "Be brief.\n");
    writeFile(path.join(ws, ".agents", "workflows", "ship.md"), "Ship it.\n");
    writeFile(path.join(roots.docsDir, "settings", "mcp_settings.json"), "{oops");

    const listed = await run(cli, ["capabilities", "--workspace", ws], { env });
    expect(listed.stdout).toMatch(/rules\s+yes\s+-\/-\/-\s+\.agents\/rules\/style\.md/);
    expect(listed.stdout).toMatch(/workflows\s+yes\s+-\/-\/-\s+ship/);
    expect(listed.stdout).toContain("data_loss: ");

    const set = await run(
      cli,
      ["capabilities", "disable", "workflows", "ship.md", "--scope", "workspace", "--workspace", ws],
      { env },
    );
    expect(set.stdout).toBe("workflows ship.md: disabled\n");
    const json = JSON.parse(
      (await run(cli, ["--json", "capabilities", "--workspace", ws, "--kind", "workflows"], { env })).stdout,
    );
    expect(json.capabilities).toHaveLength(1);
    expect(json.capabilities[0]).toMatchObject({
      name: "ship",
      toggle: { workspace: "TOGGLE_STATE_DISABLED", decidedBy: "TOGGLE_SCOPE_WORKSPACE" },
    });
    expect(json.capabilities[0].enabled ?? false).toBe(false);
    expect(json.problems).toEqual([]);

    const bad = await run(cli, ["capabilities", "toggle", "rules", "x"], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((bad as { code: number }).code).toBe(2);
  });

  it("trust lets a workspace's hooks run; untrust stops them", async () => {
    const roots = makeTestRoots();
    const env = { ...roots.env, DLINE_CORE: sidecarBinary };
    const ws = path.join(roots.base, "ws");
    writeFile(path.join(ws, ".agents", "hooks", "TaskStart.sh"), "#!/bin/sh\necho started\n", 0o755);

    const before = await run(cli, ["capabilities", "--workspace", ws, "--kind", "hooks"], { env });
    expect(before.stdout).toMatch(/hooks\s+no\s+-\/-\/-\s+TaskStart\.sh \[untrusted\]/);
    expect(before.stdout).toContain(`dline capabilities trust --workspace ${ws}`);

    expect((await run(cli, ["capabilities", "trust", "--workspace", ws], { env })).stdout).toBe(
      `${ws}: trusted (its hooks and MCP servers may run)\n`,
    );
    const after = JSON.parse(
      (await run(cli, ["--json", "capabilities", "--workspace", ws, "--kind", "hooks"], { env })).stdout,
    );
    expect(after.workspaceTrusted).toBe(true);
    expect(after.capabilities[0]).toMatchObject({ name: "TaskStart.sh", enabled: true });
    expect(after.capabilities[0].untrusted ?? false).toBe(false);

    await run(cli, ["capabilities", "untrust", "--workspace", ws], { env });
    const again = JSON.parse(
      (await run(cli, ["--json", "capabilities", "--workspace", ws, "--kind", "hooks"], { env })).stdout,
    );
    expect(again.workspaceTrusted ?? false).toBe(false);
    expect(again.capabilities[0].untrusted).toBe(true);
  });
});
