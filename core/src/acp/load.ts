/**
 * Loads the ACP agent on demand. Kept in its own module: esbuild then bundles run-acp and the
 * ACP SDK (with its schemas) as a lazily initialised chunk, off `serve`'s start-up path.
 */
export function loadAcp(): Promise<typeof import("./run-acp.js")> {
  return import("./run-acp.js");
}
