import type { Compression } from "@connectrpc/connect/protocol";

type ConnectNode = typeof import("./connect-node-parts.js");

let loaded: ConnectNode | undefined;

/**
 * connect-node, evaluated on first use: its module loads node:zlib (for its compression) as it
 * is evaluated, and the editor's first calls, plain unary ones, never need it. Streaming calls,
 * compressed bodies and other protocols load it.
 */
export async function loadConnectNode(): Promise<ConnectNode> {
  loaded ??= await import("./connect-node-parts.js");
  return loaded;
}

/** connect-node's gzip and brotli, loaded with the first compressed message. */
export const lazyCompressions: Compression[] = [
  lazyCompression("gzip", (m) => m.compressionGzip),
  lazyCompression("br", (m) => m.compressionBrotli),
];

function lazyCompression(name: string, pick: (m: ConnectNode) => Compression): Compression {
  return {
    name,
    compress: async (bytes) => pick(await loadConnectNode()).compress(bytes),
    decompress: async (bytes, readMaxBytes) => pick(await loadConnectNode()).decompress(bytes, readMaxBytes),
  };
}
