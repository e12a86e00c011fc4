/**
 * The JetBrains adapter in `npm test`: runs the Kotlin client library's Maven build and JUnit
 * tests (adapters/jetbrains/client; they drive the real dist/dline-core and the scripted model
 * server), then plays the conformance scenario through the Kotlin client and requires the same
 * state as the CLI leaves. Maven downloads its plugins and dependencies once into ~/.m2.
 */
import { spawn, spawnSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { cliDriver } from "../conformance/drivers/cli-driver.js";
import { play } from "../conformance/play.js";
import { assertBinaryBuilt, repoRoot } from "../helpers/sidecar.js";
import { kotlinDriver } from "./kotlin-driver.js";

const clientDir = path.join(repoRoot, "adapters", "jetbrains", "client");

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}


describe("JetBrains Kotlin client", () => {
  it("builds from proto/ with Maven and passes its JUnit 5 tests against the real sidecar", { timeout: 20 * 60_000 }, async () => {
    const probe = spawnSync("mvn", ["-v"], { encoding: "utf8" });
    if (probe.error || probe.status !== 0) {
      throw new Error("mvn is not installed: the JetBrains client needs Maven 3.8+ and a JDK 17 (scripts/setup.sh installs them).");
    }
    assertBinaryBuilt();
    const { code, output } = await run("mvn", ["-q", "-B", "test"], clientDir);
    // On failure, show what Maven said (surefire's summary is at the end).
    if (code !== 0) console.error(output.slice(-20_000));
    expect(code, "mvn -q -B test failed in adapters/jetbrains/client (output above)").toBe(0);
  });

  it("leaves the same files, databases and checkpoint trees as the CLI in the conformance scenario", { timeout: 300_000 }, async () => {
    const cli = await play(cliDriver);
    const kotlin = await play(kotlinDriver);
    // The scenario did something (test/conformance checks what), so equal snapshots are not equally empty.
    expect(cli.result.compare.length).toBeGreaterThan(0);
    expect(cli.afterEdit.tasks).toHaveLength(1);
    expect(cli.afterDelete.tasks).toHaveLength(0);
    expect(kotlin.result.compare).toEqual(cli.result.compare);
    expect(kotlin.afterEdit).toEqual(cli.afterEdit);
    expect(kotlin.afterDelete).toEqual(cli.afterDelete);
  });
});
