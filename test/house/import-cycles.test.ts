/**
 * No two modules of the core import each other, directly or around a longer circle (type-only
 * imports included): a circle means neither module can be understood or changed alone, and a
 * shared type belongs in a small module both import. The import rules between folders (domain
 * code never imports rpc/ or generated code; other folders import a folder through its index.ts)
 * are lint rules (eslint.config.js).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { captured } from "../helpers/items.js";

const core = path.resolve(import.meta.dirname, "../../core/src");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "gen" ? [] : sourceFiles(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

/** The modules a file imports or re-exports by a relative path (static and dynamic). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g,
    ),
  ].map((m) => m[1] ?? captured(m, "an import's specifier", 2));
  return specifiers
    .map((s) => path.resolve(path.dirname(file), s.replace(/\.js$/, ".ts")))
    .filter((target) => fs.existsSync(target));
}

/** Every group of modules that reach each other through imports (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(path.relative(core, w));
      } while (w !== v);
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("core/src imports", () => {
  const files = sourceFiles(core);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it("are read from the whole tree", () => {
    expect(files.length).toBeGreaterThan(150);
    expect(graph.get(path.join(core, "runtime", "turn-loop.ts"))).toContain(path.join(core, "runtime", "tool-turn.ts"));
  });

  it("form no circle", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("would show a circle (the check itself)", () => {
    const a = path.join(core, "a.ts");
    const b = path.join(core, "b.ts");
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts"]]);
  });
});
