import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";

const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe("the Documents folder lookup at start", () => {
  it("does not hold the handshake back; calls that need the roots wait for it", async () => {
    const roots = makeTestRoots();
    // An xdg-user-dir that answers only once the test lets it.
    const bin = path.join(roots.base, "bin");
    const started = path.join(roots.base, "lookup-started");
    const release = path.join(roots.base, "lookup-release");
    const documents = path.join(roots.base, "My Documents");
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, "xdg-user-dir"),
      `#!/bin/sh\ntouch "${started}"\nwhile [ ! -e "${release}" ]; do sleep 0.02; done\necho "${documents}"\n`,
      { mode: 0o755 },
    );
    const s = await startSidecar({ roots, env: { DLINE_DOCS_DIR: undefined, PATH: `${bin}:${process.env.PATH}` } });
    running.push(s);
    // The handshake came while the lookup is still running.
    await expect.poll(() => fs.existsSync(started)).toBe(true);
    expect(fs.existsSync(release)).toBe(false);
    let answered = false;
    const initialize = s.clients.system.initialize({ clientName: "vitest" }).finally(() => (answered = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);
    fs.writeFileSync(release, "");
    expect((await initialize).documentsRoot).toBe(path.join(documents, "dline"));
  });
});
