/**
 * Runs a scripted model server as its own process: `node cli.mjs SCRIPT.json`. Prints one JSON
 * line `{"url":"http://127.0.0.1:PORT"}` on stdout, serves until stdin closes or SIGTERM.
 * Recorded requests: GET {url}/__requests.
 */
import * as fs from "node:fs";
import { startModelServer } from "./server.js";
import type { ModelServerScript } from "./script.js";

const scriptPath = process.argv[2];
if (!scriptPath) {
  process.stderr.write("usage: model-server SCRIPT.json\n");
  process.exit(2);
}
const script = JSON.parse(fs.readFileSync(scriptPath, "utf8")) as ModelServerScript;
const server = await startModelServer(script);
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
