import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import {
  writeFileAtomicSync,
  type InstanceLayout,
  mkdirPrivate,
  narrowMode,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
} from "../storage/index.js";
import { isProcessAlive } from "../tasks/index.js";

/** How another sidecar reaches this one: its peer endpoint and the token only sidecars use. */
export interface PeerEntry {
  pid: number;
  hostname: string;
  /** The peer endpoint (not the editor's URL): `http://127.0.0.1:PORT`. */
  url: string;
  /** Bearer token of the peer endpoint; never sent to clients, never logged. */
  token: string;
  /** When the process started its endpoint (ms since the epoch). */
  startedAt: number;
}

/** Why an entry was not used; the sentence ends up in an error a person reads. */
export type PeerLookup = { entry: PeerEntry } | { entry?: undefined; why: string };

/**
 * The registry of running sidecars over one data root: `<data root>/peers/<pid>.json`, one file
 * per process, written by that process alone (0600, in a 0700 folder) and removed when it stops.
 * Entries of processes that are gone are ignored and removed by whoever finds them. An entry is
 * used only when the folder and the file belong to this user and nobody else can read or write
 * them: a file planted by another local user must not redirect a sidecar's calls (and its
 * answers to a task's questions) to a process of theirs.
 */
export class PeerRegistry {
  private registered: string | undefined;

  constructor(
    private readonly layout: InstanceLayout,
    private readonly logger: Logger,
  ) {}

  /** Publishes this process's entry (atomically: a reader sees the whole entry or none). */
  register(entry: Omit<PeerEntry, "pid" | "hostname">): void {
    mkdirPrivate(this.layout.peersDir);
    narrowMode(this.layout.peersDir, PRIVATE_DIR_MODE);
    this.removeStale();
    const full: PeerEntry = { pid: process.pid, hostname: os.hostname(), ...entry };
    const file = this.layout.peerEntry(process.pid);
    writeFileAtomicSync(file, JSON.stringify(full), { mode: PRIVATE_FILE_MODE });
    this.registered = file;
  }

  /** Removes this process's entry (at stop; also safe at exit, it is synchronous). */
  unregister(): void {
    if (!this.registered) return;
    fs.rmSync(this.registered, { force: true });
    this.registered = undefined;
  }

  /** The entry of a running sidecar, or why there is none that can be used. */
  lookup(pid: number): PeerLookup {
    const file = this.layout.peerEntry(pid);
    const unsafe = this.unsafeFolder();
    if (unsafe) return { why: unsafe };
    let entry: PeerEntry | undefined;
    try {
      entry = readPrivateJson(file) as PeerEntry;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT")
        return { why: "it has not published how to reach it (an older version, or it is starting)" };
      if (err instanceof UnsafeFile) {
        this.logger.warn("a peer registry entry is not private to this user; it is ignored", {
          file,
          why: err.message,
        });
        return { why: "its registry entry is not private to this user" };
      }
      return { why: "its registry entry cannot be read" };
    }
    if (!isEntry(entry) || entry.pid !== pid) return { why: "its registry entry is malformed" };
    if (entry.hostname !== os.hostname()) return { why: "it runs on another machine" };
    if (!isProcessAlive(pid)) {
      this.removeEntryOf(pid, file);
      return { why: "it has stopped" };
    }
    return { entry };
  }

  /** Removes the entries of processes that are gone (this machine's only). */
  removeStale(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.layout.peersDir);
    } catch {
      return;
    }
    for (const name of names) {
      const match = /^(\d+)\.json$/.exec(name);
      if (!match) continue;
      const pid = Number(match[1]);
      if (pid === process.pid || isProcessAlive(pid)) continue;
      const file = path.join(this.layout.peersDir, name);
      try {
        const entry = readPrivateJson(file) as PeerEntry;
        if (isEntry(entry) && entry.hostname !== os.hostname()) continue; // another machine's, over a shared folder
      } catch {
        // unreadable or not private: a dead pid's file is removed all the same
      }
      this.removeEntryOf(pid, file);
    }
  }

  private removeEntryOf(pid: number, file: string): void {
    try {
      fs.rmSync(file, { force: true });
      this.logger.debug("removed the registry entry of a stopped sidecar", { peerPid: pid });
    } catch {
      // another sidecar removed it, or the folder is not ours: nothing to do
    }
  }

  /** The folder must be ours and closed to others; undefined when it is. */
  private unsafeFolder(): string | undefined {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(this.layout.peersDir);
    } catch {
      return "no sidecar has published how to reach it";
    }
    if (!st.isDirectory()) return "the peer registry is not a folder";
    if (!ownedByUs(st) || (st.mode & 0o077) !== 0) {
      this.logger.warn("the peer registry folder is not private to this user; it is not used", {
        dir: this.layout.peersDir,
      });
      return "the peer registry is not private to this user";
    }
    return undefined;
  }
}

class UnsafeFile extends Error {}

function ownedByUs(st: fs.Stats): boolean {
  return typeof process.getuid !== "function" || st.uid === process.getuid();
}

/**
 * Reads a small JSON file that must be a regular file of ours, closed to others: opened without
 * following a link and without blocking (a FIFO), then checked on the open descriptor, so the
 * file checked is the file read.
 */
function readPrivateJson(file: string): unknown {
  const flags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  let fd: number;
  try {
    fd = fs.openSync(file, flags);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new UnsafeFile("a symbolic link");
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new UnsafeFile("not a regular file");
    if (!ownedByUs(st)) throw new UnsafeFile("owned by another user");
    if ((st.mode & 0o077) !== 0) throw new UnsafeFile("readable or writable by others");
    if (st.size > 64 * 1024) throw new UnsafeFile("too large");
    return JSON.parse(fs.readFileSync(fd, "utf8"));
  } finally {
    fs.closeSync(fd);
  }
}

function isEntry(v: unknown): v is PeerEntry {
  const e = v as PeerEntry | null;
  return (
    typeof e === "object" &&
    e !== null &&
    Number.isInteger(e.pid) &&
    typeof e.hostname === "string" &&
    typeof e.url === "string" &&
    /^http:\/\/(127\.0\.0\.1|\[::1\]):\d+$/.test(e.url) &&
    typeof e.token === "string" &&
    e.token.length >= 32 &&
    typeof e.startedAt === "number"
  );
}
