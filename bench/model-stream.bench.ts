// Events per second from the scripted model server (a separate process, real HTTP + SSE)
// through each provider's parser into normalised events, against a raw read of the same SSE
// bytes (fetch + reader, no parsing) in the same run. Also the SSE parser alone on the bytes.
import { AnthropicProvider } from "../core/src/agent/providers/anthropic.js";
import { OpenAiCompatibleProvider } from "../core/src/agent/providers/openai.js";
import { SseParser } from "../core/src/agent/providers/sse.js";
import type { ModelProvider } from "../core/src/agent/providers/types.js";
import { spawnModelServer } from "../test/model-server/spawn.js";
import { median, ratio, report } from "./helpers.js";

const deltasPerRequest = 50_000;
const chunkChars = 4;
const rounds = 5;

const server = await spawnModelServer({
  loop: true,
  turns: [
    {
      text: "abcd".repeat(deltasPerRequest),
      textChunkChars: chunkChars,
      toolCalls: [{ name: "read_file", input: { path: "x".repeat(4000) } }],
      usage: { input: 10, output: 20 },
    },
  ],
});

async function rawRead(
  format: "anthropic" | "openai",
): Promise<{ frames: number; bytes: number; ms: number; chunks: Uint8Array[] }> {
  const url = format === "anthropic" ? `${server.url}/v1/messages` : `${server.url}/chat/completions`;
  const start = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true }),
  });
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let frames = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    bytes += value.length;
    // count frame ends ("\n\n") so the raw figure is in the same unit: events
    for (let i = 1; i < value.length; i++) if (value[i] === 10 && value[i - 1] === 10) frames++;
  }
  return { frames, bytes, ms: performance.now() - start, chunks };
}

async function throughProvider(provider: ModelProvider): Promise<{ events: number; ms: number }> {
  const start = performance.now();
  let events = 0;
  for await (const event of provider.stream({ systemPrompt: "s", messages: [{ role: "user", content: "go" }] })) {
    events++;
    if (event.type === "error") throw event.error;
  }
  return { events, ms: performance.now() - start };
}

function parseOnly(chunks: Uint8Array[]): { events: number; ms: number } {
  const start = performance.now();
  const parser = new SseParser();
  let events = 0;
  for (const chunk of chunks) events += parser.push(chunk).length;
  events += parser.end().length;
  return { events, ms: performance.now() - start };
}

const config = { baseUrl: server.url, model: "m", apiKey: "bench-key-not-secret", idleTimeoutMs: 30_000 };
const providers: Record<"anthropic" | "openai", ModelProvider> = {
  anthropic: new AnthropicProvider(config),
  openai: new OpenAiCompatibleProvider(config),
};

try {
  for (const format of ["anthropic", "openai"] as const) {
    // warm-up
    await rawRead(format);
    await throughProvider(providers[format]);
    const raw: number[] = [];
    const parsed: number[] = [];
    const normalised: number[] = [];
    let sizes = "";
    for (let i = 0; i < rounds; i++) {
      const r = await rawRead(format);
      raw.push(r.frames / (r.ms / 1000));
      const p = parseOnly(r.chunks);
      parsed.push(p.events / (p.ms / 1000));
      const n = await throughProvider(providers[format]);
      normalised.push(n.events / (n.ms / 1000));
      sizes = `${r.frames} SSE frames, ${(r.bytes / 1e6).toFixed(1)} MB; ${n.events} normalised events per request`;
    }
    console.log(`${format}: ${sizes}`);
    const rawRate = median(raw);
    const fmt = (v: number) => `${Math.round(v).toLocaleString("en-US")}/s`;
    report(`${format}: raw SSE read (baseline)`, fmt(rawRate), fmt(rawRate), ratio(rawRate, rawRate), "-");
    report(
      `${format}: SSE parser only (in memory)`,
      fmt(median(parsed)),
      fmt(rawRate),
      ratio(median(parsed), rawRate),
      "-",
    );
    report(
      `${format}: provider -> normalised events`,
      fmt(median(normalised)),
      fmt(rawRate),
      ratio(median(normalised), rawRate),
      "-",
    );
  }
} finally {
  await server.stop();
}
