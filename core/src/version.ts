// The build injects DLINE_VERSION (scripts/build-sidecar.mjs); source runs report a dev version.
declare const DLINE_VERSION: string | undefined;

export const SERVER_VERSION: string = typeof DLINE_VERSION === "string" ? DLINE_VERSION : "0.0.0-dev";

/** Version of the wire contract in proto/dline/v1; bumped only on a breaking change. */
export const PROTOCOL_VERSION = 1;

/**
 * What `dline-core --version` prints: `dline-core 0.1.0 (protocol 1, node v24.22.3)`. The Node is
 * the one running the sidecar (the embedded one in the single executable).
 */
export function versionLine(): string {
  return `dline-core ${SERVER_VERSION} (protocol ${PROTOCOL_VERSION}, node ${process.version})`;
}

declare const DLINE_SQLITE_ADDON_HASH: string | undefined;

/** Content hash of the embedded SQLite addon, injected by the build (undefined from sources). */
export const SQLITE_ADDON_HASH: string | undefined =
  typeof DLINE_SQLITE_ADDON_HASH === "string" ? DLINE_SQLITE_ADDON_HASH : undefined;
