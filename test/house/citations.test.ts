/**
 * A clone must be enough to follow every citation: no file cites a document outside the
 * repository (the design notes the project started from live in docs/ now), every docs/ page a
 * file names exists, and no comment names an issue number, which a clone cannot look up
 * (a comment says the reason itself).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { captured } from "../helpers/items.js";

const root = path.resolve(import.meta.dirname, "../..");

/** Text files of the repository as git sees them (tracked, and new ones not ignored). */
function repositoryFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: root,
    encoding: "utf8",
  });
  return out
    .split("\0")
    .filter(Boolean)
    .filter((f) => /\.(ts|mts|cts|js|mjs|cjs|lua|vim|kt|kts|java|md|txt|sh|json|ya?ml|proto|xml|html|css)$/.test(f))
    .filter((f) => !f.startsWith("core/src/gen/") && !f.endsWith("package-lock.json") && !f.startsWith("bench/report."))
    .filter((f) => fs.existsSync(path.join(root, f)));
}

interface Finding {
  file: string;
  line: number;
  text: string;
}

function findAll(
  files: string[],
  pattern: RegExp,
  accept: (match: RegExpExecArray, file: string) => boolean = () => true,
): Finding[] {
  const found: Finding[] = [];
  for (const file of files) {
    const lines = fs.readFileSync(path.join(root, file), "utf8").split("\n");
    lines.forEach((text, i) => {
      for (const match of text.matchAll(
        new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : pattern.flags + "g"),
      )) {
        if (accept(match, file)) found.push({ file, line: i + 1, text: text.trim().slice(0, 160) });
      }
    });
  }
  return found;
}

/** Whether a match sits inside a string literal on its line (an odd number of quotes before it). */
function insideQuotes(match: RegExpExecArray): boolean {
  return (match.input.slice(0, match.index).match(/["'`]/g) ?? []).length % 2 === 1;
}

const files = repositoryFiles();

describe("citations", () => {
  it("reads a real tree", () => {
    // Guards the checks below against passing on an empty list.
    expect(files).toContain("docs/architecture.md");
    expect(files.filter((f) => f.startsWith("core/src/")).length).toBeGreaterThan(100);
  });

  it("no file cites a document outside the repository", () => {
    const outside = /\.\.\/shared\b|(?<![\w/-])specs\/[\w-]+\.md|\b(?:DESIGN|TOOLCHAIN|STYLE)\.md\b/;
    expect(findAll(files, outside)).toEqual([]);
  });

  it("every docs/ page a file cites exists", () => {
    const cited = /(?<![\w/.-])docs\/([\w-]+\.md)/;
    // Quoted paths are data (a test that writes a page of a workspace), not citations.
    const missing = findAll(
      files,
      cited,
      (match) => !insideQuotes(match) && !fs.existsSync(path.join(root, "docs", captured(match, "a cited docs/ page"))),
    );
    expect(missing).toEqual([]);
  });

  it("no comment names an issue number", () => {
    // "issue 12", "Issue #6", "issues 4 and 13", or a bare "#12" after a space or bracket (a
    // GitHub-style reference); quoted strings such as test folder names are not comments, so a
    // "#" inside quotes is accepted.
    const issue = /\b[Ii]ssues? #?\d+\b|(?<=[\s(])#\d{1,4}\b/;
    const found = findAll(files, issue, (match) => !insideQuotes(match));
    expect(found).toEqual([]);
  });
});
