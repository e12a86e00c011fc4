/**
 * The file tools read and replace regular files only. A FIFO, socket or device in the
 * workspace must never block a tool (an open of a FIFO waits for a writer, holding one of
 * libuv's four threads for good): the type is checked before opening, and the open itself is
 * non-blocking and checked again on the descriptor, so a file swapped in between cannot block.
 */
import * as fs from "node:fs/promises";
import { constants } from "node:fs";
import { ToolError } from "./types.js";

/** What kind of thing is at a path that is not a regular file, in words. */
function kindOf(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isDirectory()) return "a folder";
  if (stat.isFIFO()) return "a named pipe (FIFO)";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a regular file";
}

/** Refuses (with a tool error) a path that exists and is not a regular file. Answers whether it exists. */
export async function assertRegularOrAbsent(absolute: string, tool: string, shown: string): Promise<boolean> {
  const stat = await fs.stat(absolute).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!stat) return false;
  if (!stat.isFile())
    throw new ToolError(`${tool}: "${shown}" is ${kindOf(stat)}; only regular files are read or written.`);
  return true;
}

/**
 * An open regular file (O_NONBLOCK, checked again on the descriptor) and its size, or a tool
 * error: not_found when absent, a clear refusal when it is anything else. The caller closes it.
 */
export async function openRegularFile(
  absolute: string,
  tool: string,
  shown: string,
): Promise<{ handle: fs.FileHandle; size: number }> {
  if (!(await assertRegularOrAbsent(absolute, tool, shown)))
    throw new ToolError(`${tool}: "${shown}" does not exist.`, "not_found");
  const handle = await fs.open(absolute, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile())
      throw new ToolError(`${tool}: "${shown}" is ${kindOf(stat)}; only regular files are read or written.`);
    return { handle, size: stat.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * The bytes of a regular file, or a tool error: not_found when absent, a clear refusal when it
 * is anything else or larger than `maxBytes` (`tooLarge` words that refusal).
 */
export async function readRegularFile(
  absolute: string,
  tool: string,
  shown: string,
  maxBytes: number,
  tooLarge?: (size: number) => string,
): Promise<Buffer> {
  const { handle, size } = await openRegularFile(absolute, tool, shown);
  try {
    if (size > maxBytes)
      throw new ToolError(
        tooLarge?.(size) ?? `${tool}: "${shown}" is ${size} bytes, more than the ${maxBytes} bytes ${tool} handles.`,
      );
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
