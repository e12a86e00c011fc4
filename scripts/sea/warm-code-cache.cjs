// Build step: node warm-code-cache.cjs <wrapped bundle> <cache out> <scratch folder>
// Runs the bundle as `dline-core serve` in this process, with its roots in the scratch folder,
// makes an editor's first calls (Health, Initialize; see firstCalls), then writes V8's code cache
// of the bundle, which now holds every function those compiled. Only the build runs this.
"use strict";
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { Script } = require("node:vm");

const [bundle, out, scratch] = process.argv.slice(2);
process.env.HOME = scratch;
process.env.DLINE_DIR = path.join(scratch, "data");
process.env.DLINE_HOME_DIR = path.join(scratch, "home");
process.env.DLINE_DOCS_DIR = path.join(scratch, "docs");
delete process.env.DLINE_REMOTE_CONFIG;

const script = new Script(fs.readFileSync(bundle, "utf8"), { filename: "dline-core.js" });

// The handshake line is the bundle's one stdout write (a synchronous write to descriptor 1,
// core/src/logging/stdio.ts): take it instead of printing it.
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

setTimeout(() => {
  console.error("warm-code-cache: the sidecar did not answer within 60 s");
  process.exit(1);
}, 60_000).unref();
process.argv = [process.execPath, "dline-core", "serve"];
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, bundle, path.dirname(bundle));
