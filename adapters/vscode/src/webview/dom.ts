import { visibleParts } from "../text/visible-text.js";

export type Child = Node | string | undefined | null | false | Child[];
type Attr = string | number | boolean | undefined | ((event: Event) => void);

/**
 * Builds an element: `on<event>` attributes become listeners, `class` the class name, `true`
 * an empty attribute, `false`/undefined nothing. Strings become text nodes (never HTML).
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = String(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node: Node, children: Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/**
 * Model-supplied text as nodes, its control characters shown as marked escapes (`\e`,
 * `\u202e`): what a person reads is what is there.
 */
export function visibleText(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of visibleParts(text)) {
    fragment.appendChild(
      part.control
        ? el("span", { class: "control-char", title: "control character" }, part.text)
        : document.createTextNode(part.text),
    );
  }
  return fragment;
}

/** A button; `kind` picks the look: primary (default), secondary, link, icon. */
export function button(
  label: Child,
  onclick: () => void,
  kind: "primary" | "secondary" | "link" | "icon" = "primary",
  attrs: Record<string, Attr> = {},
): HTMLButtonElement {
  return el(
    "button",
    {
      class: kind === "primary" ? "" : kind,
      type: "button",
      onclick: (e: Event) => {
        e.stopPropagation();
        onclick();
      },
      ...attrs,
    },
    label,
  );
}

/** "12.3k" for token counts. */
export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}
