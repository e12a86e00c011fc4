/** Bounds memory per request; the largest legitimate request is a settings patch or a prompt. */
export const RPC_READ_MAX_BYTES = 16 * 1024 * 1024;
/** The largest answer the sidecar sends. */
export const RPC_WRITE_MAX_BYTES = 64 * 1024 * 1024;
