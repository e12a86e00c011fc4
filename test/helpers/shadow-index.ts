import * as fs from "node:fs";

/**
 * Which write of a git index this is: git writes every index to `index.lock` and renames it, so a
 * new write has a new inode even when it lands in the same clock tick as the last (the file
 * system's timestamps are only as fine as the kernel's tick, and two writes can share one).
 */
export function indexWriteStamp(indexPath: string): string {
  const st = fs.statSync(indexPath, { bigint: true });
  return `${st.ino}:${st.mtimeNs}`;
}
