import * as fs from "node:fs";
import { createApp, type App } from "../../core/src/app.js";
import { Lifecycle } from "../../core/src/lifecycle.js";
import { createLogger } from "../../core/src/logging/logger.js";
import { getDlineDataDir, getDlineHomePath } from "../../core/src/storage/roots.js";
import type { TestRoots } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "./harness.js";

/**
 * The sidecar's app in the test's own process (no RPC between them), with the OpenAI-compatible
 * profile pointed at a scripted model server, and a git-initialised workspace under `roots`.
 * `stop` stops the app and removes the roots.
 */
export async function startAppInProcess(
  roots: TestRoots,
  modelUrl: string,
): Promise<{ app: App; workspace: string; stop: () => Promise<void> }> {
  const env = { ...roots.env, OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: TEST_KEY, OPENAI_MODEL: "scripted-model" };
  const logger = createLogger({ write: () => undefined, close: () => undefined });
  const lifecycle = new Lifecycle(logger, () => undefined);
  const app = await createApp({
    roots: { dataRoot: getDlineDataDir(env), homeRoot: getDlineHomePath(env), documentsRoot: roots.docsDir },
    logger,
    logFile: undefined,
    lifecycle,
    env,
  });
  const stop = async () => {
    await lifecycle.stop("test over");
    fs.rmSync(roots.base, { recursive: true, force: true });
  };
  return { app, workspace: makeWorkspace(roots.base), stop };
}
