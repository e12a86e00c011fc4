// Build step: node warm-code-cache.cjs <wrapped bundle> <cache out> <addon asset> <mode> serve [ARGS...]
// Runs the bundle as `dline-core serve ARGS` in this process, as the single executable runs it
// (its `node:sea` asset, the SQLite addon, read from the build folder), makes an editor's first
// calls (Health, Initialize; see firstCalls), then writes V8's code cache of the bundle, which
// holds every function that ran. Two modes (scripts/build-sidecar.mjs, warmEditorCodeCache and
// warmCliCodeCache):
// - first-calls: the cache is written once those calls are answered (an editor's sidecar);
// - task: the handshake is then printed for the CLI that started this process as its sidecar,
//   and the cache is written when the process exits, after the CLI's whole command (a task).
// Only the build runs this.
"use strict";
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { Script } = require("node:vm");

const [bundle, out, addonAsset, mode, ...coreArgs] = process.argv.slice(2);
if (mode !== "first-calls" && mode !== "task") throw new Error(`warm-code-cache: unknown mode ${mode}`);

const script = new Script(fs.readFileSync(bundle, "utf8"), { filename: "dline-core.js" });

/** node:sea as the single executable has it: the one asset the bundle reads is the SQLite addon. */
const sea = {
  isSea: () => true,
  getRawAsset(name) {
    if (name !== "better_sqlite3.node.gz") throw new Error(`warm-code-cache: no asset ${name}`);
    const bytes = fs.readFileSync(addonAsset);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  },
};
const bundleRequire = (id) => (id === "node:sea" ? sea : require(id));

// The handshake line is the bundle's one stdout write (a synchronous write to descriptor 1,
// core/src/logging/stdio.ts): held back until the first calls are made (then passed on to the CLI).
const writeSync = fs.writeSync;
fs.writeSync = function (fd, data, offset, ...rest) {
  if (fd !== 1) return writeSync.call(this, fd, data, offset, ...rest);
  const bytes =
    typeof data === "string"
      ? Buffer.from(data)
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength).subarray(offset ?? 0);
  const text = bytes.toString("utf8");
  if (!text.startsWith('{"dline":"ready"')) return writeSync.call(this, fd, data, offset, ...rest);
  fs.writeSync = writeSync;
  void firstCalls(JSON.parse(text)).then(
    () => {
      if (mode === "task") return writeSync(1, bytes);
      fs.writeFileSync(out, script.createCachedData());
      process.exit(0);
    },
    (err) => {
      console.error(`warm-code-cache: ${err.message}`);
      process.exit(1);
    },
  );
  return bytes.byteLength;
};

process.on("exit", (code) => {
  if (mode === "task" && code === 0) fs.writeFileSync(out, script.createCachedData());
});

setTimeout(() => {
  console.error("warm-code-cache: the sidecar did not end within 120 s");
  process.exit(1);
}, 120_000).unref();

function call(handshake, method, body, type = "application/json", expect = 200, agent = false) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${handshake.url}/dline.v1.SystemService/${method}`, {
      method: "POST",
      agent,
      headers: { "content-type": type, authorization: `Bearer ${handshake.token}` },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () =>
        res.statusCode === expect ? resolve() : reject(new Error(`${method} answered HTTP ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const PROTO = "application/proto";
/** InitializeRequest{client_name: "build"} in the protobuf binary encoding. */
const INITIALIZE_BINARY = Buffer.from([0x0a, 0x05, ...Buffer.from("build")]);

/**
 * Each first call in both encodings (editors' TypeScript clients send binary, the others JSON):
 * first as the sidecar answers them before node:http and connect load (core/src/server/early-front.ts,
 * core/src/rpc/system-early.ts), each on its own connection and then on one kept alive, then,
 * once a call they do not answer has made it load them, through connect.
 */
async function firstCalls(handshake) {
  const calls = [
    (agent) => call(handshake, "Health", "", PROTO, 200, agent),
    (agent) => call(handshake, "Health", "{}", "application/json", 200, agent),
    (agent) => call(handshake, "Initialize", INITIALIZE_BINARY, PROTO, 200, agent),
    (agent) => call(handshake, "Initialize", '{"clientName":"build"}', "application/json", 200, agent),
  ];
  await Promise.all(calls.map((c) => c(false)));
  const keptAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (const c of calls) await c(keptAlive);
  // No such method: connect's handler answers it (404), and is built for it; the kept-alive
  // connection it comes on is given to node:http.
  await call(handshake, "Warm", "{}", "application/json", 404, keptAlive);
  keptAlive.destroy();
  for (const c of calls) await c(false);
}

process.argv = [process.execPath, "dline-core", ...coreArgs];
const mod = { exports: {} };
script.runInThisContext()(mod.exports, bundleRequire, mod, bundle, path.dirname(bundle));
