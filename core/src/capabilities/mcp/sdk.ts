/**
 * The parts of the official MCP SDK the client side uses. Imported lazily (`await import`) by
 * the connection, so a sidecar that never starts an MCP server does not pay for loading it.
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
