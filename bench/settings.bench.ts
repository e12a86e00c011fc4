// UpdateSettings round trips per second through the real sidecar (one process, then two over
// the same roots), against Health round trips as the baseline; and the number of
// globalState.json writes for 10,000 state changes spread over 5 seconds (goal: at most 3).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createDlineClients, spawnSidecar, type DlineClients } from "../core/src/client/index.js";
import { SettingsScope } from "../core/src/gen/dline/v1/settings_pb.js";
import { createLogger } from "../core/src/logging/logger.js";
import { FileLocks } from "../core/src/storage/file-lock.js";
import { StateStore } from "../core/src/storage/state-store.js";
import { report, ratio } from "./helpers.js";

const binary = process.env.DLINE_CORE ?? path.join(process.cwd(), "dist", "dline-core");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-settings-"));
const env = {
  PATH: process.env.PATH,
  HOME: path.join(base, "home"),
  DLINE_DIR: path.join(base, "dline"),
  DLINE_HOME_DIR: path.join(base, "dline-home"),
  DLINE_DOCS_DIR: path.join(base, "docs"),
};
fs.mkdirSync(env.HOME, { recursive: true });

async function sidecar() {
  const proc = await spawnSidecar({ binary, env, cwd: base });
  return { proc, clients: createDlineClients(proc.handshake.url, proc.handshake.token) };
}

async function perSecond(count: number, op: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await op(i); // warm-up
  const start = performance.now();
  for (let i = 0; i < count; i++) await op(i);
  return count / ((performance.now() - start) / 1000);
}

const update = (c: DlineClients, key: string) => (i: number) =>
  c.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { [key]: (i % 1000) + 1 } });

const COUNT = 400;
const a = await sidecar();
const health = await perSecond(COUNT, () => a.clients.system.health({}));
const one = await perSecond(COUNT, update(a.clients, "commandTimeoutSeconds"));
report(
  "UpdateSettings, one sidecar (round trips/s)",
  one.toFixed(0),
  health.toFixed(0),
  ratio(one, health),
  "figure (baseline: Health)",
);

const b = await sidecar();
const started = performance.now();
await Promise.all([
  perSecond(COUNT, update(a.clients, "commandTimeoutSeconds")),
  perSecond(COUNT, update(b.clients, "terminalOutputLineLimit")),
]);
const two = (2 * (COUNT + 20)) / ((performance.now() - started) / 1000);
report(
  "UpdateSettings, two sidecars (total rt/s)",
  two.toFixed(0),
  one.toFixed(0),
  ratio(two, one),
  "figure (baseline: one sidecar)",
);
await Promise.all([a.proc.stop(), b.proc.stop()]);

// 10,000 state changes over 5 s through the StateStore with its real 2 s batching, then the
// shutdown flush. Baseline: one write per change.
const logger = createLogger({ write: () => {}, close: () => {} });
const store = new StateStore(path.join(base, "state", "globalState.json"), new FileLocks(logger), logger);
await store.load();
const CHANGES = 10_000;
const spreadMs = 5_000;
const t0 = performance.now();
for (let i = 0; i < CHANGES; i++) {
  store.set(`key${i % 50}`, i);
  const due = t0 + ((i + 1) * spreadMs) / CHANGES;
  const wait = due - performance.now();
  if (wait > 1 && i % 20 === 0) await new Promise((r) => setTimeout(r, wait));
}
await store.close();
report(
  "globalState.json writes, 10,000 changes in 5 s",
  String(store.writes),
  String(CHANGES),
  ratio(store.writes, CHANGES),
  "<= 3",
);
fs.rmSync(base, { recursive: true, force: true });
