import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { collect, makeProvider, simpleRequest, textOf } from "./provider-helpers.js";
import { recorded } from "../model-server/script.js";

let server: ModelServerProcess | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe("the scripted model server as a separate process", () => {
  it("prints its URL, plays the script in both formats and reports the requests it received", async () => {
    server = await spawnModelServer({
      turns: [
        { text: "from anthropic", toolCalls: [{ name: "read_file", input: { path: "a" } }] },
        { status: 429, retryAfter: "0" },
        { text: "from openai" },
      ],
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const first = await collect(makeProvider("anthropic", server.url).stream(simpleRequest));
    expect(textOf(first)).toBe("from anthropic");
    const second = await collect(makeProvider("openai", `${server.url}/v1`).stream(simpleRequest));
    expect(textOf(second)).toBe("from openai");
    const requests = await server.requests();
    expect(requests.map((r) => [r.format, r.path])).toEqual([
      ["anthropic", "/v1/messages"],
      ["openai", "/v1/chat/completions"],
      ["openai", "/v1/chat/completions"],
    ]);
    expect(recorded(requests, 0).body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hello", cache_control: { type: "ephemeral" } }] },
    ]);
    expect(recorded(requests, 2).body.messages[1]).toEqual({ role: "user", content: "hello" });
  });

  it("exits when its stdin closes", async () => {
    server = await spawnModelServer({ turns: [] });
    const child = server.child;
    await server.stop();
    expect(child.exitCode).toBe(0);
  });
});
