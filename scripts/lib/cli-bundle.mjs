// How the CLI is bundled: one ESM script for the local Node (scripts/build-cli.mjs writes it to
// dist/dline; scripts/build-sidecar.mjs bundles it once more to drive its warm-up task).
import * as fs from "node:fs";
import * as path from "node:path";

export function cliBundleOptions(root) {
  const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
  return {
    entryPoints: [path.join(root, "adapters/cli/src/bin.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    legalComments: "none",
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __dlineCreateRequire } from 'node:module'; const require = __dlineCreateRequire(import.meta.url);",
    },
    define: { DLINE_VERSION: JSON.stringify(version) },
    logLevel: "warning",
  };
}
