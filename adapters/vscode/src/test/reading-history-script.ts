/** What the reading-history suite and its model script (test/vscode/e2e.test.ts) share; no vscode import. */
export const READING_NOTES = "notes.md";
export const READING_NOTES_TEXT = "# notes\n";
/** The last words of the long streamed answer. */
export const LONG_ANSWER_END = "END-OF-LONG-ANSWER";
/** The title of the task whose answer the model cuts at its output limit. */
export const CUT_TITLE = "Summarize the parser";
/** A table wider than the sidebar, with inline code in its cells, at the end of the long answer. */
export const WIDE_TABLE = [
  "| flag | meaning | example |",
  "|---|---|---|",
  '| `-d, --debug` | debug output with a rather long description cell that wraps | `program.option("-d, --debug")` |',
  "| `--no-sauce` | remove sauce | `pizza --no-sauce --cheese mozzarella` |",
].join("\n");
