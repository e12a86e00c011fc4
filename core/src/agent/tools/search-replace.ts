/**
 * SEARCH/REPLACE blocks as models write them:
 *
 *   ------- SEARCH            (or <<<<<<< SEARCH)
 *   exact lines to find
 *   =======
 *   lines to put instead
 *   +++++++ REPLACE           (or >>>>>>> REPLACE)
 *
 * Each block is matched exactly first, then line by line ignoring leading/trailing whitespace,
 * then by its first and last lines. A block that matches several places is refused (the model
 * adds context). All blocks must match, or nothing changes.
 */
import { ToolError } from "./types.js";

export interface SearchReplaceSplit {
  search: string;
  replace: string;
}

/**
 * A block's search and replace parts, split at its "=======" line. When the block has more
 * than one line made of "=" (a Markdown heading's underline in the text being replaced), which
 * one divides it is not known from the block alone: `otherSplits` are the other readings, and
 * the file decides (applySearchReplaceBlocks).
 */
export interface SearchReplaceBlock extends SearchReplaceSplit {
  otherSplits?: SearchReplaceSplit[];
}

const searchMarker = /^\s*(?:-{3,}|<{3,})\s*SEARCH>?\s*$/;
const dividerMarker = /^\s*={3,}\s*$/;
/** The divider as the tool's description writes it: tried before other lines of "=". */
const exactDivider = /^\s*={7}\s*$/;
const replaceMarker = /^\s*(?:\+{3,}|>{3,})\s*REPLACE<?\s*$/;

export function parseSearchReplaceBlocks(diff: string): SearchReplaceBlock[] {
  const lines = diff.replace(/\r\n/g, "\n").split("\n");
  const blocks: SearchReplaceBlock[] = [];
  /** The lines of the block being read (between its SEARCH and REPLACE lines); undefined outside one. */
  let body: string[] | undefined;
  for (const line of lines) {
    if (body === undefined) {
      // text outside blocks (a model's commentary) is ignored
      if (searchMarker.test(line)) body = [];
    } else if (replaceMarker.test(line)) {
      blocks.push(splitBlock(body, blocks.length + 1));
      body = undefined;
    } else if (searchMarker.test(line)) {
      throw new ToolError(
        body.some((l) => dividerMarker.test(l))
          ? `replace_in_file: block ${blocks.length + 1} is not closed with "+++++++ REPLACE" before the next SEARCH.`
          : `replace_in_file: SEARCH block ${blocks.length + 1} has no "=======" line between its search and replace parts.`,
      );
    } else body.push(line);
  }
  if (body !== undefined)
    throw new ToolError(`replace_in_file: block ${blocks.length + 1} is not closed with "+++++++ REPLACE".`);
  if (blocks.length === 0) {
    throw new ToolError(
      'replace_in_file: the diff holds no block; use "------- SEARCH", the exact text, "=======", the new text, "+++++++ REPLACE".',
    );
  }
  return blocks;
}

/** The block's readings: at each line of "=", those of exactly seven first, each group in order. */
function splitBlock(body: string[], number: number): SearchReplaceBlock {
  const dividers = body.flatMap((line, i) => (dividerMarker.test(line) ? [i] : []));
  if (dividers.length === 0)
    throw new ToolError(
      `replace_in_file: SEARCH block ${number} has no "=======" line between its search and replace parts.`,
    );
  const exact = dividers.filter((i) => exactDivider.test(body[i]!));
  const ordered = [...exact, ...dividers.filter((i) => !exact.includes(i))];
  const [first, ...others] = ordered.map((i) => ({
    search: joinLines(body.slice(0, i)),
    replace: joinLines(body.slice(i + 1)),
  }));
  return others.length ? { ...first!, otherSplits: others } : first!;
}

function joinLines(lines: string[]): string {
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** Applies the blocks in order to LF-normalised content; throws a ToolError naming the block that did not match. */
export function applySearchReplaceBlocks(content: string, blocks: SearchReplaceBlock[], fileLabel: string): string {
  let result = content;
  blocks.forEach((block, i) => {
    const label = `SEARCH block ${i + 1} of ${blocks.length}`;
    const readings = [block, ...(block.otherSplits ?? [])];
    // Of the readings that match one place, the one that searches the most text: a shorter one is
    // the true search text cut at an underline inside it, which matches too but replaces too little.
    let firstError: unknown;
    let best: { search: string; result: string } | undefined;
    for (const reading of readings) {
      try {
        const applied = applySplit(result, reading, label, fileLabel);
        if (!best || reading.search.length > best.search.length) best = { search: reading.search, result: applied };
      } catch (err) {
        firstError ??= err;
      }
    }
    if (best) {
      result = best.result;
      return;
    }
    throw firstError;
  });
  return result;
}

function applySplit(content: string, block: SearchReplaceSplit, label: string, fileLabel: string): string {
  if (block.search === "") {
    if (content.trim() !== "")
      throw new ToolError(
        `replace_in_file: ${label} is empty; an empty SEARCH is only allowed for an empty or new file (${fileLabel} is not empty).`,
      );
    return block.replace;
  }
  const match = findUnique(content, block.search, label, fileLabel);
  if (match) {
    // Matched at the very end of a file that lacks a final newline: keep it lacking one.
    const replace =
      match.end === content.length && !content.endsWith("\n") && block.search.endsWith("\n")
        ? block.replace.replace(/\n$/, "")
        : block.replace;
    return content.slice(0, match.start) + replace + content.slice(match.end);
  }
  const firstLine = block.search.split("\n").find((l) => l.trim() !== "") ?? "";
  throw new ToolError(
    `replace_in_file: ${label} did not match any text in ${fileLabel} (its first line: ${JSON.stringify(firstLine.slice(0, 120))}). ` +
      "No change was made to the file. Read the file again and copy the SEARCH text exactly, including whitespace and comments.",
  );
}

interface Match {
  start: number;
  end: number;
}

/**
 * Where the search text is, trying in turn: the exact text, the lines ignoring leading and
 * trailing whitespace, and (for three lines or more) the first and last lines as anchors with
 * the same number of lines between them (Cline's block-anchor fallback). The first strategy
 * that matches decides; if it matches several places, the edit is refused, since it is not
 * known which one was meant.
 */
function findUnique(content: string, search: string, label: string, fileLabel: string): Match | undefined {
  const lines = lineIndex(content);
  const strategies: [string, Match[]][] = [
    ["exactly", exactMatches(content, search)],
    ["ignoring indentation", lineMatches(content, lines, search, "trimmed")],
    ["by its first and last lines", lineMatches(content, lines, search, "anchors")],
  ];
  for (const [how, matches] of strategies) {
    if (matches.length === 1) return matches[0];
    if (matches.length > 1) {
      const at = matches.slice(0, 5).map((m) => lineOf(lines, m.start));
      throw new ToolError(
        `replace_in_file: ${label} matches ${matches.length} places in ${fileLabel} (${how}; at lines ${at.join(", ")}${matches.length > 5 ? ", ..." : ""}). ` +
          "No change was made to the file. Add lines around the text you want to change to the SEARCH part (and the same lines to REPLACE) so that it matches one place only.",
      );
    }
  }
  return undefined;
}

function exactMatches(content: string, search: string): Match[] {
  const out: Match[] = [];
  for (let at = content.indexOf(search); at !== -1; at = content.indexOf(search, at + 1))
    out.push({ start: at, end: at + search.length });
  // The search text without its final newline may match at the very end of a file lacking one
  // (also when it matched elsewhere: then it is ambiguous).
  if (search.endsWith("\n") && content.endsWith(search.slice(0, -1)) && !content.endsWith("\n")) {
    out.push({ start: content.length - (search.length - 1), end: content.length });
  }
  return out;
}

/** Start offsets of each line of the content. */
function lineIndex(content: string): number[] {
  const offsets = [0];
  for (let i = content.indexOf("\n"); i !== -1; i = content.indexOf("\n", i + 1)) offsets.push(i + 1);
  return offsets;
}

function lineOf(offsets: number[], position: number): number {
  let low = 0;
  let high = offsets.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (offsets[mid]! <= position) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** Whole-line matches: every line trimmed, or (anchors) only the first and last lines, for 3+ lines. */
function lineMatches(content: string, offsets: number[], search: string, mode: "trimmed" | "anchors"): Match[] {
  const searchLines = search
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => l.trim());
  if (mode === "anchors" && searchLines.length < 3) return [];
  const contentLines = content.split("\n");
  const last = searchLines.length - 1;
  const out: Match[] = [];
  for (let i = 0; i + searchLines.length <= contentLines.length; i++) {
    let all = true;
    if (mode === "anchors")
      all = contentLines[i]!.trim() === searchLines[0] && contentLines[i + last]!.trim() === searchLines[last];
    else {
      for (let j = 0; j < searchLines.length && all; j++)
        if (contentLines[i + j]!.trim() !== searchLines[j]) all = false;
    }
    if (!all) continue;
    const endLine = i + searchLines.length;
    out.push({ start: offsets[i]!, end: endLine < contentLines.length ? offsets[endLine]! : content.length });
  }
  return out;
}
