#!/usr/bin/env node
// Formats (`--write`) or checks (`--check`) the Lua files of the Neovim plugin with StyLua, using
// its official WebAssembly build from the npm registry (crates.io has StyLua only as source to
// compile) and the settings of .stylua.toml, the file StyLua's own command line reads.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as stylua from "@johnnymorganz/stylua";
import { parse } from "smol-toml";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const luaRoots = ["adapters/neovim"];

/**
 * StyLua's settings from .stylua.toml (numbers as they are, enum names mapped to the library's
 * values), as a function that makes a fresh Config: formatCode takes ownership of the one it gets.
 */
function loadConfig(file) {
  const settings = parse(fs.readFileSync(file, "utf8"));
  const enums = {
    syntax: stylua.LuaVersion,
    line_endings: stylua.LineEndings,
    indent_type: stylua.IndentType,
    quote_style: stylua.QuoteStyle,
    call_parentheses: stylua.CallParenType,
    collapse_simple_statement: stylua.CollapseSimpleStatement,
    space_after_function_names: stylua.SpaceAfterFunctionNames,
    block_newline_gaps: stylua.BlockNewlineGaps,
  };
  const values = Object.entries(settings).map(([key, value]) => {
    if (typeof value === "number") return [key, value];
    if (typeof value === "string" && enums[key] && value in enums[key]) return [key, enums[key][value]];
    throw new Error(`${path.relative(root, file)}: unsupported setting ${key} = ${JSON.stringify(value)}`);
  });
  return () => {
    const config = stylua.Config.new();
    for (const [key, value] of values) config[key] = value;
    return config;
  };
}

function luaFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...luaFiles(full));
    else if (entry.isFile() && entry.name.endsWith(".lua")) out.push(full);
  }
  return out;
}

const mode = process.argv[2];
if (mode !== "--check" && mode !== "--write") {
  console.error("usage: node scripts/stylua.mjs --check|--write");
  process.exit(2);
}
const newConfig = loadConfig(path.join(root, ".stylua.toml"));
const unformatted = [];
for (const file of luaRoots.flatMap((dir) => luaFiles(path.join(root, dir))).sort()) {
  const source = fs.readFileSync(file, "utf8");
  const formatted = stylua.formatCode(source, newConfig(), undefined, stylua.OutputVerification.Full);
  if (formatted === source) continue;
  unformatted.push(path.relative(root, file));
  if (mode === "--write") fs.writeFileSync(file, formatted);
}
if (mode === "--check" && unformatted.length > 0) {
  console.error(`StyLua: ${unformatted.length} file(s) not formatted (npm run format):\n  ${unformatted.join("\n  ")}`);
  process.exit(1);
}
console.log(`StyLua: ${mode === "--write" ? `${unformatted.length} file(s) formatted` : "all Lua files formatted"}`);
