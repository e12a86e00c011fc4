/**
 * The security checks in one place, against the real dist/dline-core: no RPC without
 * the token (every method, every protocol), loopback only, owner-only socket and secret files
 * (even under umask 000), file tools and artifacts confined to their roots, commands only with
 * approval unless auto-approval allows them, and secrets absent from logs, errors, responses
 * and files. Every check is counted; the file ends with "security: N checks, failures: 0".
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { toJsonString, type DescService } from "@bufbuild/protobuf";
import { Code, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, it } from "vitest";
import { bearerInterceptor, createDlineClients, spawnSidecar, type DlineClients } from "../../core/src/client/index.js";
import { CheckpointService } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { HistoryService } from "../../core/src/gen/dline/v1/history_pb.js";
import { ImportService } from "../../core/src/gen/dline/v1/import_pb.js";
import { SettingsScope, SettingsService } from "../../core/src/gen/dline/v1/settings_pb.js";
import { SystemService } from "../../core/src/gen/dline/v1/system_pb.js";
import {
  AskKind,
  TaskEventSchema,
  TaskService,
  TaskStatus,
  type TaskEvent,
} from "../../core/src/gen/dline/v1/task_pb.js";
import { TaskArtifacts } from "../../core/src/tasks/artifacts.js";
import {
  makeTestRoots,
  sidecarBinary,
  startSidecar,
  assertBinaryBuilt,
  type RunningSidecar,
} from "../helpers/sidecar.js";
import * as protoFiles from "../helpers/proto-files.js";
import type { ScriptTurn } from "../model-server/script.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { followUntilDone, makeWorkspace } from "../runtime/harness.js";
import {
  check,
  codeOfBody,
  errorCode,
  filesUnder,
  listeners,
  nonLoopbackAddresses,
  post,
  recorder,
  redactions,
  seen,
  snapshot,
  tallyLine,
  tryConnect,
  unixCall,
  waitFor,
} from "./helpers.js";
import { recorded } from "../model-server/script.js";
import { lastOf, entry, nth } from "../helpers/items.js";

const SECRET = `sk-sec-${Math.random().toString(36).slice(2)}-NEVER-PRINT`;
redactions.push(SECRET);
afterAll(() => console.log(tallyLine()));

// ---- one sidecar (debug logging) shared by the token, tool, command and secret checks

const SERVER_KEY = "sk-the-server-wants-this-one";
const services = [SystemService, SettingsService, TaskService, HistoryService, CheckpointService, ImportService];

let main: RunningSidecar;
let clients: DlineClients;
const servers: ModelServerProcess[] = [];

beforeAll(async () => {
  main = await startSidecar({ args: ["--log-level", "debug"] });
  redactions.push(main.process.handshake.token);
  clients = createDlineClients(main.process.handshake.url, main.process.handshake.token, { interceptors: [recorder] });
});

const tempDirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await main?.stop();
  for (const dir of [main?.roots.base, ...tempDirs]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A profile (with SECRET as its key) backed by a scripted model server; answers the profile id. */
async function scriptedProfile(
  turns: ScriptTurn[],
  apiKey = SECRET,
  provider: "openai" | "anthropic" = "openai",
): Promise<{ profileId: string; server: ModelServerProcess }> {
  const server = await spawnModelServer({ apiKey, turns });
  servers.push(server);
  const profileId = `sec-${servers.length}`;
  await clients.settings.upsertProfile({
    profile: { id: profileId, name: profileId, provider, baseUrl: server.url, model: "m", contextWindow: 100_000n },
  });
  await clients.settings.setSecret({ profileId, name: "api_key", value: SECRET });
  return { profileId, server };
}

async function setAutoApproval(value: Record<string, unknown>): Promise<void> {
  await clients.settings.updateSettings({
    scope: SettingsScope.GLOBAL,
    patch: {
      autoApprovalSettings: {
        enabled: false,
        readFiles: false,
        editFiles: false,
        executeSafeCommands: false,
        executeAllCommands: false,
        maxRequests: 100,
        ...value,
      },
    },
  });
}

// ---- 1. the token

describe("no RPC without the token", () => {
  it("refuses every method of every service without the token or with a wrong one (Connect JSON, Connect binary, gRPC-web)", async () => {
    const { url, token } = main.process.handshake;
    const files = Object.values(protoFiles);
    check("the protocol has six services", files.reduce((n, f) => n + f.services.length, 0) === 6);
    const badHeaders: [string, Record<string, string>][] = [
      ["no header", {}],
      ["wrong token", { Authorization: `Bearer ${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}` }],
      ["token prefix", { Authorization: `Bearer ${token.slice(0, 20)}` }],
      ["empty bearer", { Authorization: "Bearer " }],
      ["other scheme", { Authorization: `Basic ${token}` }],
      ["token with junk", { Authorization: `Bearer ${token} x` }],
      ["token in another header", { "X-Dline-Token": token }],
    ];
    const wrong = `${token}x`;
    const wrongJson = createConnectTransport({
      baseUrl: url,
      httpVersion: "1.1",
      interceptors: [bearerInterceptor(wrong)],
    });
    const wrongBinary = createConnectTransport({
      baseUrl: url,
      httpVersion: "1.1",
      useBinaryFormat: true,
      interceptors: [bearerInterceptor(wrong)],
    });
    const wrongGrpcWeb = createGrpcWebTransport({
      baseUrl: url,
      httpVersion: "1.1",
      interceptors: [bearerInterceptor(wrong)],
    });
    const rightGrpcWeb = createGrpcWebTransport({
      baseUrl: url,
      httpVersion: "1.1",
      interceptors: [bearerInterceptor(token)],
    });
    let methods = 0;
    for (const service of services as DescService[]) {
      for (const method of service.methods) {
        methods++;
        const name = `${service.name}/${method.name}`;
        if (method.methodKind === "unary") {
          for (const [what, headers] of badHeaders) {
            const res = await post(url, `${service.typeName}/${method.name}`, headers, "{}");
            check(
              `${name} ${what}: HTTP 401 unauthenticated`,
              res.status === 401 && codeOfBody(res.body) === "unauthenticated",
              `${res.status} ${res.body.slice(0, 100)}`,
            );
            check(`${name} ${what}: the answer holds no token`, !res.body.includes(token));
          }
        }
        for (const [label, transport] of [
          ["Connect JSON", wrongJson],
          ["Connect binary", wrongBinary],
          ["gRPC-web", wrongGrpcWeb],
        ] as [string, Transport][]) {
          const client = createClient(service, transport) as unknown as Record<string, (req: object) => unknown>;
          const call = entry(client, method.localName, "client method")({});
          const code =
            method.methodKind === "server_streaming"
              ? await errorCode(
                  (async () => {
                    for await (const _ of call as AsyncIterable<unknown>);
                  })(),
                )
              : await errorCode(call as Promise<unknown>);
          check(
            `${name} over ${label} with a wrong token: unauthenticated`,
            code === Code.Unauthenticated,
            `got ${code}`,
          );
        }
      }
    }
    const declared = files.flatMap((f) => f.services).reduce((n, svc) => n + svc.methods.length, 0);
    check("every method of the protocol was tried", methods === declared && methods > 30, `${methods} of ${declared}`);
    // Controls: the same calls with the token do work, so the refusals above are the token's doing.
    check("Health with the token answers", (await clients.system.health({})).status === "ok");
    const grpcWebHealth = await createClient(SystemService, rightGrpcWeb).health({});
    check("gRPC-web with the token answers", grpcWebHealth.status === "ok");
    // The refused calls had no effect: Shutdown did not stop it, UpdateSettings changed nothing.
    const patch = JSON.stringify({ scope: "SETTINGS_SCOPE_GLOBAL", patch: { mode: "plan" } });
    const refused = await post(
      url,
      "dline.v1.SettingsService/UpdateSettings",
      { Authorization: `Bearer ${wrong}` },
      patch,
    );
    check("UpdateSettings with a wrong token is refused", refused.status === 401);
    const settings = await clients.settings.getSettings({ scope: SettingsScope.GLOBAL });
    check(
      "a refused UpdateSettings changed nothing",
      settings.revision === 0n && !JSON.stringify(settings.settings ?? {}).includes("plan"),
    );
    check(
      "a refused Shutdown did not stop the sidecar",
      main.process.child.exitCode === null && (await clients.system.health({})).status === "ok",
    );
  });
});

// ---- 2. loopback only

describe("never listening beyond loopback", () => {
  it("binds 127.0.0.1 only: the handshake, the kernel's socket table, and connections through other interfaces", async () => {
    const url = new URL(main.process.handshake.url);
    const port = Number(url.port);
    check(
      "the handshake URL is http://127.0.0.1",
      url.protocol === "http:" && url.hostname === "127.0.0.1",
      main.process.handshake.url,
    );
    const v4 = listeners("/proc/net/tcp", port);
    const v6 = listeners("/proc/net/tcp6", port);
    check(
      "the kernel lists one IPv4 listener on the port, on 127.0.0.1",
      v4.length === 1 && v4[0] === "0100007F",
      JSON.stringify(v4),
    );
    check("no IPv6 listener on the port", v6.length === 0, JSON.stringify(v6));
    const addresses = nonLoopbackAddresses();
    for (const { address } of addresses) {
      const outcome = await tryConnect(address, port);
      check(`connecting through ${address} fails`, outcome !== "connected", outcome);
    }
    check("connecting through 127.0.0.1 works (control)", (await tryConnect("127.0.0.1", port)) === "connected");
    // Control: a listener bound to every interface IS reachable through them, so the refusals above mean something.
    const wide = net.createServer((s) => s.destroy());
    await new Promise<void>((resolve) => wide.listen(0, "0.0.0.0", resolve));
    const widePort = (wide.address() as net.AddressInfo).port;
    for (const { address } of addresses.filter((a) => a.family === "IPv4")) {
      check(
        `a 0.0.0.0 listener is reachable through ${address} (control)`,
        (await tryConnect(address, widePort)) === "connected",
      );
    }
    await new Promise((r) => wide.close(r));
    if (addresses.length === 0)
      console.log("security: this machine has no non-loopback interface; only the socket table was checked");
  });

  it("refuses to start with a non-loopback --listen address, before printing a handshake", async () => {
    assertBinaryBuilt();
    const roots = makeTestRoots();
    tempDirs.push(roots.base);
    const values = [
      "0.0.0.0:0",
      "[::]:0",
      "192.168.1.10:0",
      "10.0.0.1:8080",
      "example.com:0",
      "127.0.0.1.nip.io:0",
      ...nonLoopbackAddresses().map((a) => (a.family === "IPv6" ? `[${a.address}]:0` : `${a.address}:0`)),
    ];
    const runs = values.flatMap((v) => [
      ["serve", "--listen", v],
      ["serve", `--listen=${v}`],
    ]);
    const outcomes = await Promise.all(
      runs.map(
        (args) =>
          new Promise<{ args: string[]; code: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(sidecarBinary, args, { env: roots.env, stdio: ["pipe", "pipe", "pipe"] });
            let stdout = "";
            let stderr = "";
            child.stdout.on("data", (d) => (stdout += d));
            child.stderr.on("data", (d) => (stderr += d));
            // "close", not "exit": the output may still be on its way when the process has exited.
            child.once("close", (code) => resolve({ args, code, stdout, stderr }));
          }),
      ),
    );
    for (const o of outcomes) {
      check(
        `${o.args.join(" ")}: exits 2 naming loopback, no handshake`,
        o.code === 2 && o.stderr.includes("loopback only") && o.stdout === "",
        `code ${o.code}, stdout ${o.stdout.slice(0, 80)}`,
      );
    }
  });
});

// ---- 3. owner-only files, even when the sidecar is started with umask 000

describe("owner-only socket and secret files", () => {
  it("creates the Unix socket 0600 and the secret files 0600 in a 0700 folder, under umask 000", async () => {
    const roots = makeTestRoots();
    tempDirs.push(roots.base);
    const wrapper = path.join(roots.base, "dline-core-umask000");
    fs.writeFileSync(wrapper, `#!/bin/sh\numask 000\nexec "${sidecarBinary}" "$@"\n`, { mode: 0o755 });
    const socket = path.join(roots.base, "core.sock");
    const proc = await spawnSidecar({
      binary: wrapper,
      args: ["--listen", `unix:${socket}`],
      env: roots.env,
      cwd: roots.base,
    });
    try {
      const umask = /Umask:\s+(\d+)/.exec(fs.readFileSync(`/proc/${proc.handshake.pid}/status`, "utf8"))?.[1];
      check("the sidecar really runs with umask 000", umask === "0000", `umask ${umask}`);
      check("the handshake names the socket", proc.handshake.url === `unix:${socket}`);
      check(
        "the socket is 0600",
        (fs.statSync(socket).mode & 0o777) === 0o600,
        (fs.statSync(socket).mode & 0o777).toString(8),
      );
      const refused = await unixCall(socket, "/dline.v1.SystemService/Health", {}, "{}");
      check(
        "the socket refuses a call without the token",
        refused.status === 401 && codeOfBody(refused.body) === "unauthenticated",
        `${refused.status}`,
      );
      const c = createDlineClients(proc.handshake.url, proc.handshake.token);
      const { profile } = await c.settings.upsertProfile({
        profile: { name: "p", provider: "anthropic", baseUrl: "http://127.0.0.1:1", model: "m", contextWindow: 1000n },
      });
      await c.settings.setSecret({ profileId: profile!.id, name: "api_key", value: SECRET });
      await c.settings.setSecret({ profileId: "", name: "telemetry", value: `${SECRET}-2` });
      const data = path.join(roots.dlineDir, "data");
      const secretsDir = path.join(data, "secrets");
      check(
        "the secrets folder is 0700",
        (fs.statSync(secretsDir).mode & 0o777) === 0o700,
        (fs.statSync(secretsDir).mode & 0o777).toString(8),
      );
      const secretFiles = fs.readdirSync(secretsDir).map((f) => path.join(secretsDir, f));
      if (fs.existsSync(path.join(data, "secrets.json"))) secretFiles.push(path.join(data, "secrets.json"));
      check("the secret files exist", secretFiles.length >= 2, secretFiles.join(", "));
      for (const file of secretFiles) {
        const mode = fs.statSync(file).mode & 0o777;
        check(`${path.relative(data, file)} is 0600`, mode === 0o600, mode.toString(8));
      }
      const holding = secretFiles.filter((f) => fs.readFileSync(f, "utf8").includes(SECRET));
      check("the secret store holds the secret (control)", holding.length >= 1);
    } finally {
      await proc.stop();
    }
  });
});

// ---- 4. file tools and artifacts stay inside their roots

interface Escape {
  id: string;
  tool: string;
  input: Record<string, unknown>;
  /** "refused": must be refused; "ok": must run (a control); "any": may run, but only inside the workspace. */
  expect: "refused" | "ok" | "any";
}

describe("file tools cannot escape the workspace", () => {
  it("refuses .., absolute paths, symlinks out and unicode look-alikes; nothing outside is read or changed", async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-sec-fs-"));
    const OUTSIDE_TEXT = `OUTSIDE-CONTENT-${Math.random().toString(36).slice(2)}`;
    // The workspace's name is NFC; a sibling folder with the NFD spelling of that name is outside.
    const wsName = "proj-\u00e9";
    const nfdSibling = path.join(base, wsName.normalize("NFD"));
    const outside = path.join(base, "outside");
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, "secret.txt"), `${OUTSIDE_TEXT}\n`);
    fs.mkdirSync(nfdSibling);
    fs.writeFileSync(path.join(nfdSibling, "keep.txt"), `${OUTSIDE_TEXT} nfd\n`);
    fs.mkdirSync(path.join(base, "outside."));
    const wsParent = path.join(base, "wsparent");
    fs.mkdirSync(wsParent);
    const ws = path.join(wsParent, wsName);
    fs.renameSync(makeWorkspace(wsParent), ws);
    fs.symlinkSync(outside, path.join(ws, "link-out"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "secret-link.txt"));
    fs.symlinkSync(path.join(outside, "dangling-target.txt"), path.join(ws, "dangling"));
    fs.symlinkSync("../../../outside", path.join(ws, "src", "rel-link-out"));
    const before = {
      outside: snapshot(outside),
      nfd: snapshot(nfdSibling),
      top: fs.readdirSync(base).sort(),
      parent: fs.readdirSync(wsParent).sort(),
    };

    const esc: Escape[] = [];
    const add = (tool: string, input: Record<string, unknown>, expect: Escape["expect"] | boolean) =>
      esc.push({
        id: `call_esc_${esc.length}`,
        tool,
        input,
        expect: expect === true ? "refused" : expect === false ? "any" : expect,
      });
    // Controls: the same tools do work inside the workspace.
    add("read_file", { path: "README.md" }, "ok");
    add("write_to_file", { path: "src/inside.txt", content: "inside\n" }, "ok");
    add("search_files", { path: ".", regex: "demo" }, "ok");
    add("search_files", { path: ".", regex: "OUTSIDE-CONTENT" }, "ok"); // must not search through the links
    // Searches for the start of the outside text only: the full text must never travel.
    const diff = "------- SEARCH\nOUTSIDE-CONTENT-\n=======\nchanged\n+++++++ REPLACE";
    for (const p of [
      "../../outside/secret.txt",
      path.join(outside, "secret.txt"),
      "src/../../../outside/secret.txt",
      "link-out/secret.txt",
      "secret-link.txt",
      "src/rel-link-out/secret.txt",
      `${nfdSibling}/keep.txt`,
      "/etc/hostname",
    ]) {
      add("read_file", { path: p }, true);
    }
    for (const p of ["../../outside", outside, "link-out", "src/rel-link-out", nfdSibling])
      add("list_files", { path: p, recursive: true }, true);
    add("search_files", { path: "../../outside", regex: "OUTSIDE" }, true);
    add("search_files", { path: "link-out", regex: "OUTSIDE" }, true);
    for (const p of [
      "../../outside/new.txt",
      "../../outside/secret.txt",
      path.join(outside, "abs.txt"),
      "link-out/via-link.txt",
      "secret-link.txt",
      "dangling",
      "src/rel-link-out/x.txt",
      `${nfdSibling}/keep.txt`,
      `${nfdSibling}/new.txt`,
      "../../outside./x.txt",
    ]) {
      add("write_to_file", { path: p, content: "escaped\n" }, true);
    }
    add("replace_in_file", { path: "secret-link.txt", diff }, true);
    add("replace_in_file", { path: "../../outside/secret.txt", diff }, true);
    // Look-alikes that name places inside the workspace on Linux: they may run, but only inside.
    for (const p of [
      "..\uff0f..\uff0foutside\uff0fsecret.txt", // fullwidth solidus
      "\uff0e\uff0e/\uff0e\uff0e/outside/uni.txt", // fullwidth full stops
      "..\u2215..\u2215outside\u2215div.txt", // division slash
      ".../outside/dots.txt", // three dots is a name
      ".. /.. /outside/space.txt", // dot dot space
      "..\\..\\outside\\back.txt", // backslashes are name characters on Linux
      "..%2F..%2Foutside%2Fpct.txt", // URL encoding is not decoded
      "src/cafe\u0301/nfd.txt", // NFD inside
    ]) {
      add("write_to_file", { path: p, content: "inside\n" }, false);
    }

    await setAutoApproval({ enabled: true, readFiles: true, editFiles: true });
    const { profileId, server } = await scriptedProfile([
      { toolCalls: esc.map((e) => ({ id: e.id, name: e.tool, input: e.input })) },
      { toolCalls: [{ name: "attempt_completion", input: { result: "tried" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: ws, text: "try to get out", profileId });
    const events = await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case === "ask") await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: false });
    });
    const last = lastOf(events, "event");
    check(
      "the escape task completed",
      last.event.case === "statusChanged" && last.event.value.status === TaskStatus.COMPLETED,
      eventSummary(last),
    );
    const finished = new Map(
      events.flatMap((e) =>
        e.event.case === "toolFinished" ? [[e.event.value.toolCallId, e.event.value] as const] : [],
      ),
    );
    const lookAlikes = esc.filter((e) => e.expect === "any");
    console.log(
      `security: file tools: ${esc.filter((e) => e.expect === "refused").length} escapes tried, ` +
        `${lookAlikes.filter((e) => finished.get(e.id)?.ok).length} of ${lookAlikes.length} look-alike paths ran (inside the workspace)`,
    );
    for (const e of esc) {
      const f = finished.get(e.id);
      if (e.expect === "refused")
        check(
          `${e.tool} ${JSON.stringify(e.input.path)} is refused`,
          f !== undefined && !f.ok,
          f ? f.result.slice(0, 160) : "no toolFinished",
        );
      else if (e.expect === "ok")
        check(
          `${e.tool} ${JSON.stringify(e.input.path)} runs (control)`,
          f !== undefined && f.ok,
          f ? f.result.slice(0, 160) : "no toolFinished",
        );
      else check(`${e.tool} ${JSON.stringify(e.input.path)} ran or was refused`, f !== undefined, "no toolFinished");
    }
    // Nothing outside changed, nothing appeared beside the workspace; the outside text never reached the model or a client.
    check(
      "the outside folder is unchanged",
      JSON.stringify(snapshot(outside)) === JSON.stringify(before.outside),
      JSON.stringify(snapshot(outside)),
    );
    check("the NFD sibling folder is unchanged", JSON.stringify(snapshot(nfdSibling)) === JSON.stringify(before.nfd));
    check(
      "nothing appeared beside the workspace",
      JSON.stringify(fs.readdirSync(base).sort()) === JSON.stringify(before.top) &&
        JSON.stringify(fs.readdirSync(wsParent).sort()) === JSON.stringify(before.parent),
    );
    check("nothing appeared in the 'outside.' folder", fs.readdirSync(path.join(base, "outside.")).length === 0);
    check("the dangling link's target was not created", !fs.existsSync(path.join(outside, "dangling-target.txt")));
    const requests = await server.requests();
    check(
      "the model got the tool results (control)",
      requests.length === 2 && JSON.stringify(recorded(requests, 1).body).includes("call_esc_0"),
    );
    check("no outside text reached the model", !JSON.stringify(recorded(requests, 1).body).includes(OUTSIDE_TEXT));
    const eventText = events.map((e) => toJsonString(TaskEventSchema, e)).join("\n");
    check("no outside text reached the task's events", !eventText.includes(OUTSIDE_TEXT));
    // Whatever the look-alikes wrote landed inside the workspace.
    const insideWrites = Object.entries(snapshot(ws)).filter(([rel, v]) => v === "inside\n" && !rel.startsWith(".git"));
    check(
      "the look-alike writes that ran stayed inside the workspace",
      insideWrites.length > 0,
      `${insideWrites.length} files`,
    );
    fs.rmSync(base, { recursive: true, force: true });
  });

  it("task artifacts refuse .., absolute paths, symlinks out and broken links", () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-sec-art-"));
    const dir = path.join(base, "task", "artifacts");
    const outside = path.join(base, "outside");
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, "keep.txt"), "keep\n");
    fs.symlinkSync(outside, path.join(dir, "out"));
    fs.symlinkSync(path.join(outside, "keep.txt"), path.join(dir, "keep-link"));
    fs.symlinkSync(path.join(outside, "nothing"), path.join(dir, "broken"));
    const artifacts = new TaskArtifacts(dir);
    const before = snapshot(outside);
    for (const p of [
      "../x",
      "../../outside/keep.txt",
      "a/../../x",
      path.join(outside, "keep.txt"),
      "/etc/passwd",
      "C:\\x",
      "..\\x",
      "out/keep.txt",
      "out/new.txt",
      "keep-link",
      "broken",
      "",
      "a\0b",
    ]) {
      let code = "ok";
      try {
        artifacts.write(p, "escaped\n");
      } catch (err) {
        code = (err as { code?: string }).code ?? String(err);
      }
      check(`artifact ${JSON.stringify(p)} is refused with invalid_argument`, code === "invalid_argument", code);
    }
    check("the outside folder is unchanged", JSON.stringify(snapshot(outside)) === JSON.stringify(before));
    artifacts.write("ok/inside.txt", "fine\n");
    check("a plain relative artifact is written (control)", artifacts.read("ok/inside.txt").toString() === "fine\n");
    for (const p of ["\uff0e\uff0e/uni.txt", "...", "caf\u00e9.txt", "cafe\u0301.txt"]) {
      artifacts.write(p, "inside\n");
      check(
        `artifact look-alike ${JSON.stringify(p)} stays inside`,
        fs.readFileSync(path.join(dir, p), "utf8") === "inside\n",
      );
    }
    check(
      "nothing appeared beside the artifacts folder",
      JSON.stringify(fs.readdirSync(path.join(base, "task"))) === JSON.stringify(["artifacts"]),
    );
    fs.rmSync(base, { recursive: true, force: true });
  });

  it("task ids cannot name paths outside the task folders", async () => {
    const docsTop = fs.existsSync(main.roots.base) ? fs.readdirSync(main.roots.base).sort() : [];
    for (const id of ["../escape", "../../etc", "/etc/passwd", "a/../../b", "..", "x\0y"]) {
      for (const [name, call] of [
        ["GetTask", () => clients.tasks.getTask({ taskId: id })],
        ["Resume", () => clients.tasks.resume({ taskId: id })],
        ["ListCheckpoints", () => clients.checkpoints.listCheckpoints({ taskId: id })],
        ["task settings", () => clients.settings.getSettings({ scope: SettingsScope.TASK, taskId: id })],
      ] as [string, () => Promise<unknown>][]) {
        const code = await errorCode(call());
        check(
          `${name} ${JSON.stringify(id)}: invalid_argument or not_found`,
          code === Code.InvalidArgument || code === Code.NotFound,
          String(code),
        );
      }
    }
    check(
      "nothing appeared beside the roots",
      JSON.stringify(
        fs
          .readdirSync(main.roots.base)
          .sort()
          .filter((f) => !f.endsWith(".stderr")),
      ) === JSON.stringify(docsTop.filter((f) => !f.endsWith(".stderr"))),
    );
  });
});

// ---- 5. commands need approval unless auto-approval allows them

function eventSummary(e: TaskEvent | undefined): string {
  return e ? `${e.event.case} ${e.event.case === "statusChanged" ? TaskStatus[e.event.value.status] : ""}` : "none";
}

describe("commands never run without approval unless auto-approval allows them", () => {
  const cases: {
    label: string;
    approval: Record<string, unknown>;
    requiresApproval: boolean | undefined;
    runs: boolean;
  }[] = [
    { label: "auto-approval off, no answer", approval: {}, requiresApproval: false, runs: false },
    {
      label: "auto-approval off though command switches on",
      approval: { enabled: false, executeSafeCommands: true, executeAllCommands: true },
      requiresApproval: false,
      runs: false,
    },
    {
      label: "safe commands only, model says it needs approval",
      approval: { enabled: true, executeSafeCommands: true },
      requiresApproval: true,
      runs: false,
    },
    {
      label: "safe commands only, flag missing",
      approval: { enabled: true, executeSafeCommands: true },
      requiresApproval: undefined,
      runs: false,
    },
    {
      label: "only file switches on",
      approval: { enabled: true, readFiles: true, editFiles: true },
      requiresApproval: false,
      runs: false,
    },
    {
      label: "safe commands on, safe command",
      approval: { enabled: true, executeSafeCommands: true },
      requiresApproval: false,
      runs: true,
    },
    {
      label: "all commands on",
      approval: { enabled: true, executeAllCommands: true },
      requiresApproval: true,
      runs: true,
    },
  ];

  it.each(cases.map((c, i) => [i, c.label] as const))("case %i: %s", async (i) => {
    const c = nth(cases, i, "case");
    const ws = makeWorkspace(fs.mkdtempSync(path.join(main.roots.base, `cmd-${i}-`)));
    const marker = path.join(ws, "ran.marker");
    await setAutoApproval(c.approval);
    const input: Record<string, unknown> = { command: "touch ran.marker" };
    if (c.requiresApproval !== undefined) input.requires_approval = c.requiresApproval;
    const { profileId } = await scriptedProfile([
      { toolCalls: [{ name: "execute_command", input }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: ws, text: "run it", profileId });
    let commandAsk = false;
    let otherAsk = false;
    const follow = followUntilDone(clients, taskId, async (e) => {
      if (e.event.case !== "ask") return;
      if (e.event.value.kind === AskKind.COMMAND_APPROVAL) commandAsk = true;
      else otherAsk = true;
    });
    if (c.runs) {
      const events = await follow;
      const last = lastOf(events, "event");
      check(
        `${c.label}: the command ran without asking`,
        fs.existsSync(marker) && !commandAsk,
        `marker ${fs.existsSync(marker)}, asked ${commandAsk}`,
      );
      check(
        `${c.label}: the task completed`,
        last.event.case === "statusChanged" && last.event.value.status === TaskStatus.COMPLETED,
        eventSummary(last),
      );
    } else {
      // Nobody answers: the command waits, and does not run; a Cancel ends the task without running it.
      await waitFor(() => commandAsk, 15_000);
      check(`${c.label}: approval is asked`, commandAsk && !otherAsk);
      await new Promise((r) => setTimeout(r, 500));
      check(`${c.label}: not run while waiting`, !fs.existsSync(marker));
      await clients.tasks.cancel({ taskId });
      const events = await follow;
      const last = lastOf(events, "event");
      check(
        `${c.label}: cancelled`,
        last.event.case === "statusChanged" && last.event.value.status === TaskStatus.CANCELLED,
        eventSummary(last),
      );
      check(`${c.label}: never run`, !fs.existsSync(marker));
    }
  });

  it("a denied command does not run, and maxRequests bounds auto-approval", async () => {
    const ws = makeWorkspace(fs.mkdtempSync(path.join(main.roots.base, "cmd-deny-")));
    await setAutoApproval({ enabled: true, executeSafeCommands: true, maxRequests: 1 });
    const { profileId } = await scriptedProfile([
      {
        toolCalls: [
          { name: "execute_command", input: { command: "touch first.marker", requires_approval: false } },
          { name: "execute_command", input: { command: "touch second.marker", requires_approval: false } },
        ],
      },
      // The denial goes back to the model, which answers.
      { text: "Understood: not running it." },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: ws, text: "run both", profileId });
    let asks = 0;
    await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case !== "ask") return;
      asks++;
      check(
        "the second command is asked for after maxRequests, after the first ran",
        fs.existsSync(path.join(ws, "first.marker")) && !fs.existsSync(path.join(ws, "second.marker")),
      );
      await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: false, text: "no" });
    });
    check("one ask (the second command)", asks === 1, `${asks} asks`);
    check("the denied command did not run", !fs.existsSync(path.join(ws, "second.marker")));
  });
});

// ---- 6. secrets stay out of logs, errors, responses and files (runs last: it reads the whole log)

describe("secrets absent from logs, errors and responses", () => {
  it("a failing model call that echoes the key leaks it nowhere", async () => {
    // The server wants another key and answers 401 quoting the key it got (as real APIs do).
    let profileId = "";
    let taskId = "";
    for (const format of ["openai", "anthropic"] as const) {
      const scripted = await scriptedProfile([{ text: "never" }], SERVER_KEY, format);
      profileId = scripted.profileId;
      const ws = makeWorkspace(fs.mkdtempSync(path.join(main.roots.base, "leak-")));
      taskId = (await clients.tasks.newTask({ workspaceRoot: ws, text: "hello", profileId })).taskId;
      const events = await followUntilDone(clients, taskId);
      const requests = await scripted.server.requests();
      check(
        `${format}: the model server received the secret (control: the key was used)`,
        requests.length >= 1 && JSON.stringify(recorded(requests, 0).headers).includes(SECRET),
      );
      const error = events.find((e) => e.event.case === "error");
      check(
        `${format}: the task reports an auth error`,
        error?.event.case === "error" && error.event.value.code === "auth",
        error ? toJsonString(TaskEventSchema, error) : "no error event",
      );
    }
    // Errors a client can provoke around secrets.
    await errorCode(clients.settings.setSecret({ profileId: "ghost", name: "api_key", value: SECRET }));
    await errorCode(clients.settings.setSecret({ profileId, name: "", value: SECRET }));
    await errorCode(
      clients.settings.upsertProfile({
        profile: { id: profileId, name: "x", provider: "nope", baseUrl: "x", model: "", contextWindow: 0n },
      }),
    );
    // Everything a client can read back.
    await clients.tasks.getTask({ taskId });
    await clients.history.listTasks({});
    await clients.settings.listProfiles({});
    await clients.settings.getSettings({ scope: SettingsScope.GLOBAL });
    const init = await clients.system.initialize({ clientName: "security" });
    await clients.system.health({});
    check("responses were recorded (control)", seen.length > 50, `${seen.length}`);
    const leaked = seen.filter((s) => s.includes(SECRET));
    check(`no RPC response or error of ${seen.length} holds the secret`, leaked.length === 0, leaked[0]?.slice(0, 200));
    const token = main.process.handshake.token;
    await main.stop();
    const log = fs.readFileSync(init.logFile, "utf8");
    const stderr = fs.readFileSync(main.stderrFile, "utf8");
    check("the log was written (control)", log.includes("serving") && log.length > 1000, `${log.length} bytes`);
    check("the log file holds no secret", !log.includes(SECRET));
    check("stderr holds no secret", !stderr.includes(SECRET));
    check("the log and stderr hold no token", !log.includes(token) && !stderr.includes(token));
    check(
      "the log holds no key of the model server's answer either",
      !log.includes(SERVER_KEY) && !stderr.includes(SERVER_KEY),
    );
    // Every file the sidecar wrote, but the secret store itself and the addon cache.
    const data = path.join(main.roots.dlineDir, "data");
    const files = [main.roots.dlineDir, main.roots.homeDir, main.roots.docsDir].flatMap((root) =>
      filesUnder(
        root,
        (p) =>
          p === path.join(data, "secrets") || p === path.join(data, "secrets.json") || p.endsWith(`${path.sep}cache`),
      ),
    );
    check("the roots hold files (control)", files.length > 20, `${files.length}`);
    const holding = files.filter((f) => fs.readFileSync(f).includes(SECRET));
    check(
      `none of the ${files.length} files outside the secret store holds the secret`,
      holding.length === 0,
      holding.join(", "),
    );
  });
});
