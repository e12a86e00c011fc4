// The single executable's main script. It compiles the sidecar's bundle (the asset
// "dline-core.js", already wrapped as a CommonJS function) with V8's code cache of a warmed-up
// run (made by scripts/sea/warm-code-cache.cjs at build time, see codeCache), and runs it.
// Node's own SEA code cache holds only what V8 compiles before running a script; these also
// hold every function the start-up, the first calls (and, for the CLI, a task) compiled, which
// the answers would otherwise wait for.
"use strict";
const { getRawAsset } = require("node:sea");
const { Script } = require("node:vm");

// The bundle is ASCII (esbuild escapes every other character; the build checks it), so it is read
// as Latin-1: no text decoder, whose first use loads ICU's converters (3 MB of resident memory).
const source = Buffer.from(getRawAsset("dline-core.js")).toString("latin1");
const cache = codeCache();
const script = new Script(source, {
  filename: "dline-core.js",
  // A cache made by another V8 or with other V8 flags is rejected, and the bundle compiles as usual.
  cachedData: cache.byteLength > 0 ? cache : undefined,
});
if (script.cachedDataRejected) {
  // Still works, only slower to start: said on stderr (the log), never on stdout (the handshake).
  require("node:fs").writeSync(
    2,
    "dline-core: V8 rejected the embedded code cache (made by another Node or other flags); the bundle was compiled at start-up\n",
  );
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, process.execPath, require("node:path").dirname(process.execPath));

/**
 * The code cache for this process (empty when the build could not run the embedded Node: a
 * cross-build without qemu-user). The CLI's sidecar (`serve --one-command`, a process per
 * command) takes the one warmed with a whole task, compressed; an editor's, started once and
 * long-lived, the smaller one of a start and the first calls, which V8 deserializes sooner.
 */
function codeCache() {
  if (!process.argv.includes("--one-command")) return new Uint8Array(getRawAsset("dline-core.cache"));
  const compressed = new Uint8Array(getRawAsset("dline-core-cli.cache.zst"));
  return compressed.byteLength === 0 ? compressed : require("node:zlib").zstdDecompressSync(compressed);
}
