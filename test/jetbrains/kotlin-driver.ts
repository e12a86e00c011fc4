/**
 * The Kotlin driver of the conformance suite (test/conformance/drivers/driver.ts): runs
 * dev.dline.client.conformance.ConformanceDriver from adapters/jetbrains/client as its own JVM,
 * with the classes and the classpath file the Maven build leaves in target/ (run `mvn test`
 * there first; test/jetbrains/client.test.ts does).
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { ComparedFile, Driver, DriverContext, DriverResult } from "../conformance/drivers/driver.js";
import { MODEL, scenario, TEST_KEY } from "../conformance/scenario.js";
import { repoRoot, sidecarBinary } from "../helpers/sidecar.js";

const target = path.join(repoRoot, "adapters", "jetbrains", "client", "target");

function classpath(): string {
  const file = path.join(target, "classpath.txt");
  if (!fs.existsSync(file))
    throw new Error(`${file} does not exist: run "mvn -B test" in adapters/jetbrains/client first.`);
  return [path.join(target, "classes"), path.join(target, "test-classes"), fs.readFileSync(file, "utf8").trim()].join(
    path.delimiter,
  );
}

function runDriver(ctx: DriverContext, phase: string, extra: Record<string, string>): Promise<Record<string, unknown>> {
  const out = path.join(ctx.roots.base, `kotlin-${phase}.json`);
  return new Promise((resolve, reject) => {
    const child = spawn("java", ["-cp", classpath(), "dev.dline.client.conformance.ConformanceDriver"], {
      cwd: ctx.workspace,
      env: {
        ...ctx.roots.env,
        DLINE_CORE: sidecarBinary,
        DLINE_CONFORMANCE_PHASE: phase,
        DLINE_CONFORMANCE_WORKSPACE: ctx.workspace,
        DLINE_CONFORMANCE_MODEL_URL: ctx.modelUrl,
        DLINE_CONFORMANCE_MODEL: MODEL,
        DLINE_CONFORMANCE_KEY: TEST_KEY,
        DLINE_CONFORMANCE_PROMPT: scenario.prompt,
        DLINE_CONFORMANCE_EDITED_TEXT: scenario.editedAnswer,
        DLINE_CONFORMANCE_OUT: out,
        ...extra,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (output += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0 || !fs.existsSync(out))
        return reject(new Error(`the Kotlin driver (${phase}) failed with exit ${code}:\n${output}`));
      resolve(JSON.parse(fs.readFileSync(out, "utf8")) as Record<string, unknown>);
    });
  });
}

export const kotlinDriver: Driver = {
  name: "kotlin",
  async play(ctx): Promise<DriverResult> {
    const result = await runDriver(ctx, "play", {});
    return { taskId: result.taskId as string, compare: result.compare as ComparedFile[] };
  },
  async deleteTask(ctx, taskId) {
    await runDriver(ctx, "delete", { DLINE_CONFORMANCE_TASK: taskId });
  },
};
