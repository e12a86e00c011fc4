// The Neovim plugin's Lua Connect client on a long server stream (50,000 events, the size of
// a long answer streamed as small deltas, with a few newlines): events decoded per second
// (goal: at least 10,000) against a baseline measured in the same run, the same bytes read
// from the socket without decoding; and the longest stall of Neovim's main loop while
// streaming (goal: under 16 ms), measured with a 2 ms timer in the editor. Asserts nothing.
import { type spawnSync } from "node:child_process";
import * as http from "node:http";
import * as path from "node:path";
import { report, ratio } from "./helpers.js";

const EVENTS = Number(process.env.BENCH_NVIM_EVENTS ?? 50_000);
const root = process.cwd();

function envelope(flags: number, json: string): Buffer {
  const payload = Buffer.from(json, "utf8");
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

// The whole stream, prepared once: messageAdded, then deltas (every 20th ends a line).
const frames: Buffer[] = [
  envelope(
    0,
    JSON.stringify({
      event: {
        seq: "1",
        taskId: "bench",
        messageAdded: { message: { id: "m1", role: "MESSAGE_ROLE_ASSISTANT", kind: "text", text: "", partial: true } },
      },
    }),
  ),
];
for (let i = 2; i <= EVENTS; i++) {
  const text = i % 20 === 0 ? "end of a line.\n" : `word${i} and more text `;
  frames.push(
    envelope(
      0,
      JSON.stringify({
        event: { seq: String(i), taskId: "bench", time: "1764400000000", messageDelta: { messageId: "m1", text } },
      }),
    ),
  );
}
frames.push(envelope(2, "{}"));
const stream = Buffer.concat(frames);

const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "Content-Type": "application/connect+json" });
    // Written in 16 KiB pieces, as a busy sidecar's socket would deliver them.
    for (let i = 0; i < stream.length; i += 16 * 1024) res.write(stream.subarray(i, i + 16 * 1024));
    res.end();
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;

const result = await new Promise<ReturnType<typeof spawnSync>>((resolve) => {
  // spawnSync would block this process's server: run nvim asynchronously.
  void import("node:child_process").then(({ spawn }) => {
    const child = spawn(
      process.env.DLINE_NVIM ?? "nvim",
      [
        "--headless",
        "--clean",
        "-u",
        "NONE",
        "-c",
        `luafile ${path.join(root, "adapters", "neovim", "tests", "bench", "stream.lua")}`,
      ],
      {
        env: {
          ...process.env,
          BENCH_URL: `http://127.0.0.1:${port}`,
          BENCH_PLUGIN: path.join(root, "adapters", "neovim"),
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr } as unknown as ReturnType<typeof spawnSync>));
  });
});
server.close();
if (result.status !== 0) {
  console.error(`neovim bench failed (exit ${result.status}):\n${String(result.stderr)}`);
  process.exit(1);
}
const rows = String(result.stdout)
  .split("\n")
  .filter(Boolean)
  .map(
    (l) =>
      JSON.parse(l) as {
        way: string;
        events?: number;
        bytes?: number;
        seconds: number;
        maxGapMs: number;
        over16: number;
        ticks: number;
      },
  );
const raw = rows.find((r) => r.way === "raw")!;
const client = rows.find((r) => r.way === "client")!;
const chat = rows.find((r) => r.way === "chat")!;
const rawRate = EVENTS / raw.seconds;
const clientRate = client.events! / client.seconds;
const chatRate = chat.events! / chat.seconds;
console.log(`${EVENTS} events, ${(stream.length / 1024 / 1024).toFixed(1)} MiB of stream`);
report(
  "lua client: events decoded per second",
  clientRate.toFixed(0),
  rawRate.toFixed(0),
  ratio(clientRate, rawRate),
  ">= 10,000/s",
);
report(
  "lua client + chat buffer: events per second",
  chatRate.toFixed(0),
  rawRate.toFixed(0),
  ratio(chatRate, rawRate),
  ">= 10,000/s",
);
report(
  "longest main-loop stall, client (ms)",
  client.maxGapMs.toFixed(1),
  raw.maxGapMs.toFixed(1),
  ratio(client.maxGapMs, raw.maxGapMs),
  "< 16 ms",
);
report(
  "longest main-loop stall, chat (ms)",
  chat.maxGapMs.toFixed(1),
  raw.maxGapMs.toFixed(1),
  ratio(chat.maxGapMs, raw.maxGapMs),
  "< 16 ms",
);
// On a loaded machine the OS alone delays timers now and then (the raw read shows how much).
const share = (r: { over16: number; ticks: number }) => `${((100 * r.over16) / Math.max(1, r.ticks)).toFixed(2)}%`;
report("2 ms ticks later than 16 ms, client", share(client), share(raw), "-", "0%");
report("2 ms ticks later than 16 ms, chat", share(chat), share(raw), "-", "0%");
