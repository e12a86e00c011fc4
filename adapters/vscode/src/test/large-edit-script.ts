/**
 * The large-file edit of the restore-notices suite, shared with its model script
 * (test/vscode/e2e.test.ts): a file over the 256 KiB the core sends whole, and one line changed.
 */
export const LARGE_FILE = "large.js";
export const LARGE_FILE_TEXT = Array.from({ length: 12_000 }, (_, i) => `export const line${i} = ${i};\n`).join("");
export const LARGE_EDIT = { search: "export const line2000 = 2000;", replace: "export const line2000 = 2001;" };
