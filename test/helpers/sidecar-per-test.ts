import { afterEach } from "vitest";
import { startSidecar, type RunningSidecar } from "./sidecar.js";

/**
 * A `start` for a test file (called at its top level): each sidecar it starts is stopped after
 * the test that started it.
 */
export function sidecarsStoppedAfterEach(): () => Promise<RunningSidecar> {
  const running: RunningSidecar[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
  });
  return async () => {
    const s = await startSidecar();
    running.push(s);
    return s;
  };
}
