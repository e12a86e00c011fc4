import { fileURLToPath } from "node:url";
import { ConnectError } from "@connectrpc/connect";
import { createDlineClients, spawnSidecar, type DlineClients } from "../../../core/src/client/index.js";
import { formatDoctor, runDoctor } from "./doctor.js";
import { locateCore } from "./locate-core.js";

declare const DLINE_VERSION: string | undefined;
const CLI_VERSION = typeof DLINE_VERSION === "string" ? DLINE_VERSION : "0.0.0-dev";

const USAGE = `Usage: dline [--core PATH] [--json] <command>

Commands:
  doctor      Start the sidecar, print its versions and roots, and what is missing.
  version     Print the CLI version.

Options:
  --core PATH   The dline-core sidecar binary (default: $DLINE_CORE, or dline-core next to dline).
  --json        Print machine-readable JSON.
`;

interface GlobalOptions {
  core: string | undefined;
  json: boolean;
  rest: string[];
}

function parseGlobal(argv: string[]): GlobalOptions {
  const options: GlobalOptions = { core: undefined, json: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--json") options.json = true;
    else if (arg === "--core") options.core = argv[++i];
    else if (arg.startsWith("--core=")) options.core = arg.slice("--core=".length);
    else options.rest.push(arg);
  }
  return options;
}

/** Starts a private sidecar for this command and stops it (closing its stdin) afterwards. */
async function withSidecar<T>(options: GlobalOptions, fn: (clients: DlineClients, core: string) => Promise<T>): Promise<T> {
  const core = locateCore(options.core, process.env, fileURLToPath(import.meta.url));
  const sidecar = await spawnSidecar({ binary: core, cwd: process.cwd(), env: process.env, stderr: "ignore" });
  try {
    return await fn(createDlineClients(sidecar.handshake.url, sidecar.handshake.token), core);
  } finally {
    await sidecar.stop();
  }
}

export async function main(argv: string[]): Promise<number> {
  const options = parseGlobal(argv);
  const [command] = options.rest;
  switch (command) {
    case "version":
    case "--version":
      process.stdout.write(options.json ? JSON.stringify({ version: CLI_VERSION }) + "\n" : `dline ${CLI_VERSION}\n`);
      return 0;
    case "doctor": {
      const report = await withSidecar(options, (clients, core) => runDoctor(clients, core, CLI_VERSION));
      process.stdout.write(options.json ? JSON.stringify(report, null, 2) + "\n" : formatDoctor(report));
      return report.missing.length ? 1 : 0;
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`dline: unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof ConnectError ? `${err.code}: ${err.rawMessage}` : err instanceof Error ? err.message : String(err);
    process.stderr.write(`dline: ${message}\n`);
    process.exit(1);
  },
);
