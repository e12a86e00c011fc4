/**
 * The peer registry and endpoint are a way into a sidecar: only sidecars of this user over the
 * same roots may use them, their token never leaves them, and a file another local user could
 * have written is never followed. Real sidecar processes; a decoy server records whether a
 * sidecar was lured into calling it.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { createDlineClients } from "../../core/src/client/index.js";
import { TaskService, AskKind } from "../../core/src/gen/dline/v1/task_pb.js";
import type { RunningSidecar } from "../helpers/sidecar.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { openWindows, watch, writeThenComplete } from "./follow-helpers.js";

const scope = scopedSidecars();

const peersDir = (s: RunningSidecar) => path.join(s.roots.dlineDir, "data", "peers");
const entryFile = (s: RunningSidecar) => path.join(peersDir(s), `${s.process.handshake.pid}.json`);

/** The sidecar's entry, once its peer endpoint is up (it starts with the domain modules). */
async function entryOf(s: RunningSidecar): Promise<{ pid: number; url: string; token: string }> {
  await s.clients.history.listTasks({});
  await expect.poll(() => fs.existsSync(entryFile(s))).toBe(true);
  return JSON.parse(fs.readFileSync(entryFile(s), "utf8"));
}

/** A loopback server that answers nothing useful and counts the requests it was sent. */
async function decoy(): Promise<{ url: string; requests: () => number }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    count++;
    req.resume();
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  scope.onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests: () => count };
}

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("the peer registry", () => {
  it("holds one private file per running sidecar, removed when it stops; a killed sidecar's is cleaned by the next", async () => {
    const roots = scope.testRoots("dline-peers-");
    const first = await scope.sidecar(roots);
    const entry = await entryOf(first);
    expect(fs.statSync(peersDir(first)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(entryFile(first)).mode & 0o777).toBe(0o600);
    expect(entry.pid).toBe(first.process.handshake.pid);
    expect(entry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(entry.url).not.toBe(first.process.handshake.url);
    expect(entry.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(entry.token).not.toBe(first.process.handshake.token);

    process.kill(first.process.handshake.pid, "SIGKILL");
    await expect
      .poll(() => {
        try {
          process.kill(first.process.handshake.pid, 0);
          return true;
        } catch {
          return false;
        }
      })
      .toBe(false);
    expect(fs.existsSync(entryFile(first))).toBe(true);
    const second = await scope.sidecar(roots);
    await entryOf(second);
    expect(fs.existsSync(entryFile(first))).toBe(false);

    await second.stop();
    expect(fs.readdirSync(peersDir(second))).toEqual([]);
  });

  it("never hands the peer token to a client, never logs it, and each token opens only its own door", async () => {
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 2, writeThenComplete());
    const [owner, follower] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const followed = watch(follower.clients, taskId);
    const ask = await followed.ask(AskKind.TOOL_APPROVAL);
    await follower.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    await followed.ended();
    const ownerEntry = await entryOf(owner);
    const followerEntry = await entryOf(follower);

    // Nothing a client receives, and nothing either sidecar logs, holds a peer token.
    const seen = [
      JSON.stringify(followed.events, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
      JSON.stringify(await follower.clients.tasks.getTask({ taskId }), (_k, v) =>
        typeof v === "bigint" ? String(v) : v,
      ),
      JSON.stringify(owner.process.handshake),
      JSON.stringify(follower.process.handshake),
      fs.readFileSync(owner.stderrFile, "utf8"),
      fs.readFileSync(follower.stderrFile, "utf8"),
      fs.readFileSync(path.join(roots.homeDir, "logs", "dline-core.log"), "utf8"),
    ].join("\n");
    for (const token of [ownerEntry.token, followerEntry.token]) expect(seen).not.toContain(token);

    // The editor's token does not open the peer endpoint, and the peer token not the editor's.
    const editorTokenAtPeer = createDlineClients(ownerEntry.url, owner.process.handshake.token);
    expect((await failure(editorTokenAtPeer.tasks.getTask({ taskId }))).code).toBe(Code.Unauthenticated);
    const peerTokenAtEditor = createDlineClients(owner.process.handshake.url, ownerEntry.token);
    expect((await failure(peerTokenAtEditor.tasks.getTask({ taskId }))).code).toBe(Code.Unauthenticated);
    expect((await failure(peerTokenAtEditor.system.shutdown({}))).code).toBe(Code.Unauthenticated);
  });

  it("serves other sidecars only the calls they forward about a task", async () => {
    const { sidecars } = await openWindows(scope, 1, writeThenComplete());
    const [owner] = sidecars;
    const entry = await entryOf(owner);
    const peer = createDlineClients(entry.url, entry.token);
    // Nothing that creates tasks, deletes them, reads settings or stops the sidecar.
    expect((await failure(peer.tasks.newTask({ workspaceRoot: owner.roots.base, text: "x" }))).code).toBe(
      Code.Unimplemented,
    );
    expect((await failure(peer.tasks.deleteTasks({ mode: 2 }))).code).toBe(Code.Unimplemented);
    expect((await failure(peer.settings.getSettings({}))).code).toBe(Code.Unimplemented);
    expect((await failure(peer.system.shutdown({}))).code).toBe(Code.Unimplemented);
    expect((await failure(peer.history.listTasks({}))).code).toBe(Code.Unimplemented);
    // Streams too: a subscription without the token ends unauthenticated.
    const anonymous = createClient(TaskService, createConnectTransport({ baseUrl: entry.url, httpVersion: "1.1" }));
    const stream = anonymous.subscribe({ taskId: "x", afterSeq: 0n });
    expect(
      (
        await failure(
          (async () => {
            for await (const _ of stream);
          })(),
        )
      ).code,
    ).toBe(Code.Unauthenticated);
  });

  it("ignores an entry another user could have written or replaced, and says the task cannot be reached", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, writeThenComplete());
    const [owner, follower] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const ask = await watch(owner.clients, taskId).ask(AskKind.TOOL_APPROVAL);
    const genuine = fs.readFileSync(entryFile(owner), "utf8");
    const lure = await decoy();
    const planted = JSON.stringify({ ...JSON.parse(genuine), url: lure.url });
    const pid = owner.process.handshake.pid;
    const answer = () => follower.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    const refusedBecause = async (why: RegExp) => {
      const err = await failure(answer());
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toContain(
        `Task ${taskId} is running in another Dline window (pid ${pid}), which cannot be reached`,
      );
      expect(err.rawMessage).toMatch(why);
    };

    // Readable or writable by others.
    fs.writeFileSync(entryFile(owner), planted, { mode: 0o644 });
    fs.chmodSync(entryFile(owner), 0o644);
    await refusedBecause(/not private/);
    // A link to a file elsewhere.
    const elsewhere = path.join(owner.roots.base, "elsewhere.json");
    fs.writeFileSync(elsewhere, planted, { mode: 0o600 });
    fs.rmSync(entryFile(owner));
    fs.symlinkSync(elsewhere, entryFile(owner));
    await refusedBecause(/not private/);
    fs.rmSync(entryFile(owner));
    // Another user's file (only root can make one here; CI runs as root).
    if (process.getuid?.() === 0) {
      fs.writeFileSync(entryFile(owner), planted, { mode: 0o600 });
      fs.chownSync(entryFile(owner), 65534, 65534);
      await refusedBecause(/not private/);
      fs.rmSync(entryFile(owner));
    }
    // A registry folder others can write into.
    fs.writeFileSync(entryFile(owner), planted, { mode: 0o600 });
    fs.chmodSync(peersDir(owner), 0o777);
    await refusedBecause(/not private/);
    fs.chmodSync(peersDir(owner), 0o700);
    // No entry at all (a sidecar of an older version).
    fs.rmSync(entryFile(owner));
    await refusedBecause(/has not published how to reach it/);
    expect(lure.requests()).toBe(0);

    // The genuine entry back: the answer reaches the owner.
    fs.writeFileSync(entryFile(owner), genuine, { mode: 0o600 });
    await answer();
    await watch(owner.clients, taskId).ended();
    expect(lure.requests()).toBe(0);
  });
});
