import { describe, expect, it } from "vitest";
import { IgnoreMatcher } from "../../core/src/agent/tools/ignore-matcher.js";

describe("IgnoreMatcher (gitignore syntax)", () => {
  const matcher = new IgnoreMatcher().add(
    [
      "# comment",
      "*.log",
      "!keep.log",
      "/build",
      "secrets/",
      "docs/**/*.pdf",
      "**/tmp",
      "a?c.txt",
      "[bc]at.md",
      "\\#hash",
      "trailing.txt   ",
      "src/gen/",
      "!src/gen/keep.ts",
    ].join("\n"),
  );
  const cases: [string, boolean, boolean][] = [
    ["app.log", false, true],
    ["deep/dir/app.log", false, true],
    ["keep.log", false, false],
    ["build", true, true],
    ["build/out.js", false, true],
    ["src/build/out.js", false, false], // anchored to the root
    ["secrets", false, false], // dir-only rule, a file of that name is not ignored
    ["secrets/key.pem", false, true],
    ["x/secrets/key.pem", false, true],
    ["docs/a.pdf", false, true],
    ["docs/x/y/a.pdf", false, true],
    ["other/docs/a.pdf", false, false],
    ["tmp/file", false, true],
    ["a/b/tmp", true, true],
    ["abc.txt", false, true],
    ["abbc.txt", false, false],
    ["cat.md", false, true],
    ["rat.md", false, false],
    ["#hash", false, true],
    ["trailing.txt", false, true],
    ["src/gen/keep.ts", false, true], // a file inside an ignored folder cannot be re-included
    ["src/main.ts", false, false],
  ];
  it.each(cases)("%s (dir=%s) ignored=%s", (p, isDir, expected) => {
    expect(matcher.ignores(p, isDir)).toBe(expected);
  });

  it("applies nested ignore files only below their folder", () => {
    const m = new IgnoreMatcher().add("*.tmp\n/local", "sub");
    expect(m.ignores("sub/a.tmp")).toBe(true);
    expect(m.ignores("a.tmp")).toBe(false);
    expect(m.ignores("sub/local")).toBe(true);
    expect(m.ignores("sub/x/local")).toBe(false);
  });
});
