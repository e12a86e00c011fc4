// The `dline` executable. It starts the sidecar a task's command line needs first, then loads
// the rest of the CLI (main.ts and its commands, Connect and the generated messages), so that
// the two start side by side (early-sidecar.ts).
import { fileURLToPath } from "node:url";
import { EarlySidecar, likelyLaunch } from "./early-sidecar.js";

const argv = process.argv.slice(2);
const early = new EarlySidecar(likelyLaunch(argv, process.env, fileURLToPath(import.meta.url)), process.env);
const { runCli } = await import("./main.js");
runCli(argv, early);
