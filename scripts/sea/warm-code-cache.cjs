// Build step: node warm-code-cache.cjs <wrapped bundle> <cache out> <scratch folder>
// Runs the bundle as `dline-core serve` in this process, with its roots in the scratch folder,
// makes an editor's first calls (Health, Initialize), then writes V8's code cache of the bundle,
// which now holds every function those compiled. Only the build runs this.
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

function call(handshake, method, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${handshake.url}/dline.v1.SystemService/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${handshake.token}` },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`${method} answered HTTP ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function firstCalls(handshake) {
  await call(handshake, "Health", "{}");
  await call(handshake, "Initialize", '{"clientName":"build"}');
  await call(handshake, "Health", "{}");
}

setTimeout(() => {
  console.error("warm-code-cache: the sidecar did not answer within 60 s");
  process.exit(1);
}, 60_000).unref();
process.argv = [process.execPath, "dline-core", "serve"];
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, bundle, path.dirname(bundle));
