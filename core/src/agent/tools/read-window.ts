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
