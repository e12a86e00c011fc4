import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import * as path from "node:path";

/**
 * Whether a process waits on a named pipe (FIFO): opening one that has no writer (git opens a
 * `.gitignore`, `.gitattributes` or `.gitmodules` of the workspace that is a FIFO, and would
 * wait forever), or reading or writing one of the file system. Read from Linux's /proc: the
 * kernel function each thread sleeps in (`wchan`) and the system call it is in (`syscall`).
 * Answers the FIFO's path when /proc tells it, "" when it cannot; undefined when the process
 * does not wait on a FIFO or /proc is not there (other systems).
 */
export function fifoWaitedOn(pid: number): string | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const tid of tids) {
    const dir = `/proc/${pid}/task/${tid}`;
    const wchan = readOrEmpty(`${dir}/wchan`).trim();
    if (wchan === "wait_for_partner" || wchan === "fifo_open")
      return openedPath(pid, readOrEmpty(`${dir}/syscall`)) ?? "";
    if (/^pipe_(read|write|wait)/.test(wchan)) {
      // A pipe: ours (stdin, stdout) are anonymous; a FIFO of the file system has a path.
      const fd = Number(readOrEmpty(`${dir}/syscall`).split(" ")[1]);
      const target = Number.isInteger(fd) ? linkOrEmpty(`/proc/${pid}/fd/${fd}`) : "";
      if (target.startsWith("/")) return target;
    }
  }
  return undefined;
}

/** System call numbers of open and openat (x64; arm64 has only openat). */
const OPEN_CALLS: Record<string, { open?: number; openat: number }> = {
  x64: { open: 2, openat: 257 },
  arm64: { openat: 56 },
};
const AT_FDCWD = 0xffffff9c;

/** The path an open/openat in progress names, read from the process's memory (allowed for our own children). */
function openedPath(pid: number, syscall: string): string | undefined {
  const calls = OPEN_CALLS[process.arch];
  const [nr, ...args] = syscall.trim().split(" ");
  if (!calls) return undefined;
  let dirfd: number | undefined;
  let pointer: string | undefined;
  if (Number(nr) === calls.openat) [dirfd, pointer] = [Number(args[0]), args[1]];
  else if (calls.open !== undefined && Number(nr) === calls.open) pointer = args[0];
  if (!pointer) return undefined;
  const name = readCString(pid, Number(pointer));
  if (!name) return undefined;
  if (path.isAbsolute(name)) return name;
  const base =
    dirfd === undefined || (dirfd & 0xffffffff) === AT_FDCWD
      ? linkOrEmpty(`/proc/${pid}/cwd`)
      : linkOrEmpty(`/proc/${pid}/fd/${dirfd}`);
  return base ? path.resolve(base, name) : name;
}

function readCString(pid: number, address: number): string | undefined {
  if (!Number.isSafeInteger(address) || address <= 0) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/mem`, "r");
    const buf = Buffer.alloc(4096);
    // Up to the end of the page the string starts in (the next one may not be mapped), then on.
    const first = 4096 - (address % 4096);
    let read = readSync(fd, buf, 0, first, address);
    if (!buf.subarray(0, read).includes(0) && read === first)
      read += readSync(fd, buf, read, 4096 - read, address + read);
    const end = buf.subarray(0, read).indexOf(0);
    return end > 0 ? buf.subarray(0, end).toString("utf8") : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function linkOrEmpty(link: string): string {
  try {
    return readlinkSync(link);
  } catch {
    return "";
  }
}
