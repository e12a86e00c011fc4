// The parts of connect-node the server uses, in a module of their own so that connect-node.ts can
// load them on first need (a dynamic import of connect-node itself would bundle all of it).
export {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
