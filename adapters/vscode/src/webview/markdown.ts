import markdownit, { type MarkdownIt } from "markdown-it";
import hljs from "highlight.js/lib/common";
import { visible } from "../text/visible-text.js";

/**
 * Renders model text as Markdown: markdown-it with raw HTML disabled (it is escaped, so a
 * reply cannot inject markup or scripts; links to javascript:, vbscript: and file: are refused
 * by markdown-it), code blocks highlighted by highlight.js when their language is known and
 * given a Copy button, tables in a box that scrolls sideways. Control characters are made visible first.
 */
export function createMarkdownRenderer(): (text: string) => string {
  const md: MarkdownIt = markdownit({
    html: false,
    linkify: true,
    breaks: false,
    highlight: (code, lang) => codeBlock(md, code, lang),
  });
  // Links open in the editor's browser (VS Code asks first); never in the webview itself.
  const defaultLink =
    md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    token?.attrSet("title", token.attrGet("href") ?? "");
    return defaultLink(tokens, idx, options, env, self);
  };
  // A table wider than the narrow chat scrolls sideways in its own box (a keyboard can scroll
  // it too), instead of squeezing its columns until inline code breaks one character per line.
  md.renderer.rules.table_open = (tokens, idx, options, _env, self) =>
    `<div class="table-wrap" tabindex="0" role="region" aria-label="Table">${self.renderToken(tokens, idx, options)}`;
  md.renderer.rules.table_close = (tokens, idx, options, _env, self) =>
    `${self.renderToken(tokens, idx, options)}</div>`;
  return (text) => md.render(visible(text));
}

function codeBlock(md: MarkdownIt, code: string, lang: string): string {
  const language = lang && hljs.getLanguage(lang) ? lang : "";
  const body = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : md.utils.escapeHtml(code);
  const label = md.utils.escapeHtml(lang || "text");
  return (
    `<pre class="code-block"><div class="code-toolbar"><span class="code-lang">${label}</span>` +
    `<button type="button" class="icon copy-code" title="Copy code" aria-label="Copy code">Copy</button></div>` +
    `<code class="hljs${language ? ` language-${md.utils.escapeHtml(language)}` : ""}">${body}</code></pre>`
  );
}
