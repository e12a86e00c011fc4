/**
 * The part of a file read_file returns: the lines asked for (a default window from the start
 * when none are), no more characters than one result may take in the context window, and a
 * note with the file's total line count and how to read on when the file was not shown whole.
 */
import { ToolError } from "./types.js";

/** Lines read when no range is asked for. */
export const DEFAULT_READ_LINES = 2000;
/** Without a bound from the context window, a read returns at most this many characters. */
export const DEFAULT_READ_CHARS = 100_000;

export function lineNumber(input: Record<string, unknown>, name: string): number | undefined {
  const value = input[name];
  if (value === undefined || value === null || value === "") return undefined;
  const n =
    typeof value === "number"
      ? value
      : typeof value === "string" && /^\s*\d+\s*$/.test(value)
        ? Number(value)
        : Number.NaN;
  if (!Number.isInteger(n) || n < 1) throw new ToolError(`read_file: "${name}" must be a line number (1 or more).`);
  return n;
}

export function readWindow(
  content: string,
  options: { startLine?: number; endLine?: number; maxChars?: number; path: string },
): string {
  // Room is left for the note, so a capped result never loses it.
  const maxChars = Math.max(1000, (options.maxChars ?? DEFAULT_READ_CHARS) - 400);
  const lines = content.split("\n");
  // A final newline ends the last line; it does not start another.
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  const ranged = options.startLine !== undefined || options.endLine !== undefined;
  if (!ranged && total <= DEFAULT_READ_LINES && content.length <= maxChars) return content;
  const start = options.startLine ?? 1;
  if (start > total)
    throw new ToolError(
      `read_file: "${options.path}" has ${total} line${total === 1 ? "" : "s"}; start_line ${start} is past its end.`,
    );
  let end = Math.min(total, options.endLine ?? start + DEFAULT_READ_LINES - 1);
  if (end < start) throw new ToolError("read_file: end_line must not be before start_line.");
  const out: string[] = [];
  let chars = 0;
  let cutLine = false;
  for (let i = start; i <= end; i++) {
    const line = lines[i - 1]!;
    if (chars + line.length + 1 > maxChars) {
      if (out.length === 0) {
        // One line longer than the whole budget (minified code): its beginning.
        out.push(line.slice(0, maxChars));
        cutLine = true;
        end = i;
      } else end = i - 1;
      break;
    }
    out.push(line);
    chars += line.length + 1;
  }
  const whole = start === 1 && end === total && !cutLine;
  if (whole) return content;
  const notes = [`Showing lines ${start}-${end} of ${total} of ${options.path}.`];
  if (cutLine)
    notes.push(`Line ${end} is ${lines[end - 1]!.length} characters long; only its first ${maxChars} are shown.`);
  if (end < total)
    notes.push(
      `To read more, call read_file with start_line ${end + 1}${options.endLine !== undefined && options.endLine > end ? ` (and end_line ${options.endLine})` : ""}.`,
    );
  return `${out.join("\n")}\n\n[${notes.join(" ")}]`;
}

/** Bytes read at a time from a file too big to read whole. */
const STREAM_CHUNK_BYTES = 64 * 1024;
/** After the window, the rest of a big file is scanned for its line count only when it is at most this long. */
export const MAX_COUNTED_BYTES = 64 * 1024 * 1024;

/** What `readWindowStreamed` reads from: a file handle's positional reads (a FileHandle fits). */
export interface ReadableFile {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

/**
 * The same window as `readWindow`, of a file too big to hold whole: the file is read in 64 KiB
 * chunks from its start to the window's end, lines before the window are only counted, and
 * what is kept is bounded by the character budget whatever the file (a single line of
 * gigabytes is cut at the budget). The lines after the window are counted for the total when
 * they are at most `countLimit` bytes; otherwise the note says they were not counted.
 */
export async function readWindowStreamed(
  file: ReadableFile,
  size: number,
  options: {
    startLine?: number;
    endLine?: number;
    maxChars?: number;
    path: string;
    signal?: AbortSignal;
    countLimit?: number;
    /** Bytes read at a time (tests use small ones to put chunk boundaries everywhere). */
    chunkBytes?: number;
  },
): Promise<string> {
  const maxChars = Math.max(1000, (options.maxChars ?? DEFAULT_READ_CHARS) - 400);
  const countLimit = options.countLimit ?? MAX_COUNTED_BYTES;
  const start = options.startLine ?? 1;
  const askedEnd = options.endLine ?? start + DEFAULT_READ_LINES - 1;
  if (askedEnd < start) throw new ToolError("read_file: end_line must not be before start_line.");
  const chunkBytes = options.chunkBytes ?? STREAM_CHUNK_BYTES;
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let position = 0;
  /** The number of the line the next byte belongs to. */
  let line = 1;
  const out: string[] = [];
  let chars = 0;
  /** The current window line's bytes so far (copies), and their count. */
  let parts: Buffer[] = [];
  let partBytes = 0;
  /** The last line shown; undefined while the window is being read. */
  let end: number | undefined;
  /** A line cut at the budget: its number and its bytes so far (all of them once `whole`). */
  let cut: { line: number; bytes: number; whole: boolean } | undefined;
  /** Whether the file was read to its end (the total is known). */
  let atEof = false;
  /** Where the window ended: counting the rest is cheap when what is left is small. */
  let countFrom = -1;
  let endsWithNewline = false;

  /** Ends the current window line (its bytes are in `parts`): shown whole, cut when it is the first and too long, else the window ends before it. */
  const closeLine = () => {
    const text = Buffer.concat(parts, partBytes).toString("utf8");
    parts = [];
    partBytes = 0;
    if (chars + text.length + 1 <= maxChars) {
      out.push(text);
      chars += text.length + 1;
      if (line >= askedEnd) end = line;
      return;
    }
    if (out.length === 0) {
      out.push(text.slice(0, maxChars));
      cut = { line, bytes: Buffer.byteLength(text), whole: true };
      end = line;
    } else end = line - 1;
  };

  while (!atEof) {
    options.signal?.throwIfAborted();
    if (end !== undefined) {
      if (countFrom < 0) countFrom = position;
      if (size - countFrom > countLimit) break;
    }
    // A cut line is measured as far as a count would go.
    if (cut && !cut.whole && cut.bytes > countLimit) break;
    const { bytesRead } = await file.read(chunk, 0, chunkBytes, position);
    if (bytesRead === 0) {
      atEof = true;
      break;
    }
    position += bytesRead;
    endsWithNewline = chunk[bytesRead - 1] === 10;
    let offset = 0;
    while (offset < bytesRead) {
      const newline = chunk.indexOf(10, offset);
      const stop = newline < 0 || newline >= bytesRead ? bytesRead : newline;
      if (end === undefined && line >= start) {
        if (cut) {
          // Still inside the line that was cut: only its length is counted.
          cut.bytes += stop - offset;
        } else {
          // Kept: no more bytes than can make the characters still in the budget (4 bytes each at most).
          const room = 4 * (maxChars - chars) + 4 - partBytes;
          const take = Math.min(stop - offset, Math.max(0, room));
          if (take > 0) {
            parts.push(Buffer.from(chunk.subarray(offset, offset + take)));
            partBytes += take;
          }
          if (take < stop - offset) {
            // Longer than the budget: it cannot be shown whole.
            if (out.length === 0) {
              const text = Buffer.concat(parts, partBytes).toString("utf8");
              out.push(text.slice(0, maxChars));
              cut = { line, bytes: partBytes + (stop - offset - take), whole: false };
              parts = [];
              partBytes = 0;
            } else {
              end = line - 1;
              parts = [];
              partBytes = 0;
            }
          }
        }
      }
      if (stop === bytesRead) break;
      // A newline ends the line.
      if (end === undefined && line >= start) {
        if (cut) {
          cut.whole = true;
          end = line;
        } else closeLine();
      }
      line++;
      offset = stop + 1;
    }
  }
  if (cut && !cut.whole) {
    // The cut line ends at the end of the file, or was not measured to its end.
    cut.whole = atEof;
    end = cut.line;
  } else if (atEof && end === undefined && line >= start && partBytes > 0 && !endsWithNewline) closeLine();
  const total = atEof ? (endsWithNewline || position === 0 ? line - 1 : line) : undefined;
  if (total !== undefined && start > total)
    throw new ToolError(
      `read_file: "${options.path}" has ${total} line${total === 1 ? "" : "s"}; start_line ${start} is past its end.`,
    );
  const last = end ?? Math.min(askedEnd, total ?? askedEnd);
  const notes = [
    total !== undefined
      ? `Showing lines ${start}-${last} of ${total} of ${options.path} (${size} bytes).`
      : `Showing lines ${start}-${last} of ${options.path} (${size} bytes; its lines past line ${last} were not counted).`,
  ];
  if (cut)
    notes.push(
      `Line ${cut.line} is ${cut.whole ? "" : "more than "}${cut.bytes} bytes long; only its first ${out[0]!.length} characters are shown.`,
    );
  if (total === undefined || last < total)
    notes.push(
      `To read more, call read_file with start_line ${last + 1}${options.endLine !== undefined && options.endLine > last ? ` (and end_line ${options.endLine})` : ""}.`,
    );
  return `${out.join("\n")}\n\n[${notes.join(" ")}]`;
}
