import * as fs from "node:fs/promises";
import * as path from "node:path";

/** Writes through a temp file and rename, keeping the file's mode, so a crash never leaves half a file. */
export async function writeFileAtomic(absolute: string, content: string): Promise<void> {
  const mode = await fs.stat(absolute).then((s) => s.mode & 0o7777, () => undefined);
  const temp = path.join(path.dirname(absolute), `.${path.basename(absolute)}.dline-${process.pid}-${Date.now()}.tmp`);
  try {
    await fs.writeFile(temp, content, mode !== undefined ? { mode } : undefined);
    await fs.rename(temp, absolute);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}
