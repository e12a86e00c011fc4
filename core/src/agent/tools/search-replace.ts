/**
 * SEARCH/REPLACE blocks as models write them:
 *
 *   ------- SEARCH            (or <<<<<<< SEARCH)
 *   exact lines to find
 *   =======
 *   lines to put instead
 *   +++++++ REPLACE           (or >>>>>>> REPLACE)
 *
 * Each block is matched exactly first, then line by line ignoring leading/trailing whitespace.
 * All blocks must match, or nothing changes.
 */
import { ToolError } from "./types.js";

export interface SearchReplaceBlock {
  search: string;
  replace: string;
}

const searchMarker = /^\s*(?:-{3,}|<{3,})\s*SEARCH>?\s*$/;
const dividerMarker = /^\s*={3,}\s*$/;
const replaceMarker = /^\s*(?:\+{3,}|>{3,})\s*REPLACE<?\s*$/;

export function parseSearchReplaceBlocks(diff: string): SearchReplaceBlock[] {
  const lines = diff.replace(/\r\n/g, "\n").split("\n");
  const blocks: SearchReplaceBlock[] = [];
  let state: "outside" | "search" | "replace" = "outside";
  let search: string[] = [];
  let replace: string[] = [];
  for (const line of lines) {
    if (state === "outside") {
      if (searchMarker.test(line)) {
        state = "search";
        search = [];
      }
      // text outside blocks (a model's commentary) is ignored
    } else if (state === "search") {
      if (dividerMarker.test(line)) {
        state = "replace";
        replace = [];
      } else if (replaceMarker.test(line) || searchMarker.test(line)) {
        throw new ToolError(`replace_in_file: SEARCH block ${blocks.length + 1} has no "=======" line between its search and replace parts.`);
      } else search.push(line);
    } else if (replaceMarker.test(line)) {
      blocks.push({ search: joinLines(search), replace: joinLines(replace) });
      state = "outside";
    } else if (searchMarker.test(line)) {
      throw new ToolError(`replace_in_file: block ${blocks.length + 1} is not closed with "+++++++ REPLACE" before the next SEARCH.`);
    } else replace.push(line);
  }
  if (state !== "outside") throw new ToolError(`replace_in_file: block ${blocks.length + 1} is not closed with "+++++++ REPLACE".`);
  if (blocks.length === 0) {
    throw new ToolError('replace_in_file: the diff holds no block; use "------- SEARCH", the exact text, "=======", the new text, "+++++++ REPLACE".');
  }
  return blocks;
}

function joinLines(lines: string[]): string {
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** Applies the blocks in order to LF-normalised content; throws a ToolError naming the block that did not match. */
export function applySearchReplaceBlocks(content: string, blocks: SearchReplaceBlock[], fileLabel: string): string {
  let result = content;
  blocks.forEach((block, i) => {
    const label = `SEARCH block ${i + 1} of ${blocks.length}`;
    if (block.search === "") {
      if (result.trim() !== "") throw new ToolError(`replace_in_file: ${label} is empty; an empty SEARCH is only allowed for an empty or new file (${fileLabel} is not empty).`);
      result = block.replace;
      return;
    }
    const exact = result.indexOf(block.search);
    if (exact !== -1) {
      result = result.slice(0, exact) + block.replace + result.slice(exact + block.search.length);
      return;
    }
    // The search text without its final newline may match at the very end of a file lacking one.
    if (block.search.endsWith("\n") && result.endsWith(block.search.slice(0, -1))) {
      const at = result.length - (block.search.length - 1);
      result = result.slice(0, at) + block.replace.replace(/\n$/, "");
      return;
    }
    const lineMatch = matchLinesIgnoringWhitespace(result, block.search);
    if (lineMatch) {
      result = result.slice(0, lineMatch.start) + block.replace + result.slice(lineMatch.end);
      return;
    }
    const firstLine = block.search.split("\n").find((l) => l.trim() !== "") ?? "";
    throw new ToolError(
      `replace_in_file: ${label} did not match any text in ${fileLabel} (its first line: ${JSON.stringify(firstLine.slice(0, 120))}). ` +
        "No change was made to the file. Read the file again and copy the SEARCH text exactly, including whitespace and comments.",
    );
  });
  return result;
}

/** Finds the search lines in the content comparing trimmed lines; returns character offsets of whole lines. */
function matchLinesIgnoringWhitespace(content: string, search: string): { start: number; end: number } | undefined {
  const searchLines = search.replace(/\n$/, "").split("\n").map((l) => l.trim());
  const contentLines = content.split("\n");
  const offsets: number[] = [];
  let offset = 0;
  for (const line of contentLines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  for (let i = 0; i + searchLines.length <= contentLines.length; i++) {
    let all = true;
    for (let j = 0; j < searchLines.length; j++) {
      if (contentLines[i + j].trim() !== searchLines[j]) {
        all = false;
        break;
      }
    }
    if (all) {
      const endLine = i + searchLines.length;
      const end = endLine < contentLines.length ? offsets[endLine] : content.length;
      return { start: offsets[i], end };
    }
  }
  return undefined;
}
