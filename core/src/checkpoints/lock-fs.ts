import * as fs from "node:fs";

type Callback<T = void> = (err: NodeJS.ErrnoException | null, value?: T) => void;

function settle<T>(callback: Callback<T>, run: () => T): void {
  let value: T;
  try {
    value = run();
  } catch (err) {
    process.nextTick(callback, err);
    return;
  }
  process.nextTick(callback, null, value);
}

/**
 * The file system calls proper-lockfile makes (mkdir, stat, utimes, rmdir on a lock folder),
 * done synchronously with the callback still called later. A checkpoint takes and releases the
 * repository lock every turn; each asynchronous call is a thread-pool round trip (0.3-1 ms on
 * these machines) where the synchronous one takes microseconds. One per lock: proper-lockfile
 * caches the file system's mtime precision on this object.
 */
export function syncLockFs() {
  return {
    mkdir: (p: string, callback: Callback) => settle(callback, () => void fs.mkdirSync(p)),
    stat: (p: string, callback: Callback<fs.Stats>) => settle(callback, () => fs.statSync(p)),
    utimes: (p: string, atime: Date, mtime: Date, callback: Callback) =>
      settle(callback, () => fs.utimesSync(p, atime, mtime)),
    rmdir: (p: string, callback: Callback) => settle(callback, () => fs.rmdirSync(p)),
    rmdirSync: (p: string) => fs.rmdirSync(p),
    realpath: (p: string, callback: Callback<string>) => settle(callback, () => fs.realpathSync(p)),
  };
}
