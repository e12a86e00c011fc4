import * as vscode from "vscode";
import { assert, waitFor } from "./runner.js";
import type { UiBridge } from "./ui-bridge.js";

/**
 * What the end-to-end suite looks at in the page: the chat webview's elements, the theme, and
 * the checks on what is visible (buttons' contrast, the chat's height), with screenshots of
 * each view in the light and the dark theme.
 */
export const THEMES = {
  light: "Default Light Modern",
  dark: "Default Dark Modern",
  hc: "Default High Contrast",
} as const;
export type ThemeName = keyof typeof THEMES;
const BODY_CLASS: Record<ThemeName, string> = {
  light: "vscode-light",
  dark: "vscode-dark",
  hc: "vscode-high-contrast",
};

export class ChatUi {
  constructor(readonly ui: UiBridge) {}

  texts(selector: string): Promise<string[]> {
    return this.ui.request({ action: "texts", selector, frame: "webview" });
  }

  click(selector: string, text?: string): Promise<string[]> {
    return this.ui.request({ action: "click", selector, text, frame: "webview" });
  }

  fill(selector: string, value: string, press?: string): Promise<string[]> {
    return this.ui.request({ action: "fill", selector, value, press, frame: "webview" });
  }

  evaluate<T>(expression: string): Promise<T> {
    return this.ui.evaluate<T>(expression, "webview");
  }

  /** Waits until an element matching `selector` (with `text`, if given) is in the chat. */
  waitFor(what: string, selector: string, text?: string, timeoutMs = 30_000): Promise<string[]> {
    return waitFor(
      what,
      async () => {
        const texts = await this.texts(selector);
        return (text ? texts.some((t) => t.includes(text)) : texts.length > 0) && texts;
      },
      timeoutMs,
    );
  }

  /** The value of the composer's text box. */
  input(): Promise<string> {
    return this.evaluate<string>(`document.getElementById("input").value`);
  }

  async useTheme(theme: ThemeName): Promise<void> {
    await vscode.workspace
      .getConfiguration("workbench")
      .update("colorTheme", THEMES[theme], vscode.ConfigurationTarget.Global);
    await waitFor(`the chat in the ${theme} theme`, async () =>
      (await this.evaluate<string>("document.body.className")).split(/\s+/).includes(BODY_CLASS[theme]),
    );
  }

  /** Screenshots of the page as it is now, in each theme (`<name>-<theme>.png`); back to dark after. */
  async screenshots(name: string, themes: ThemeName[] = ["light", "dark"]): Promise<void> {
    for (const theme of themes) {
      await this.useTheme(theme);
      await this.ui.request({ action: "screenshot", name: `${name}-${theme}` });
    }
    if (themes.at(-1) !== "dark") await this.useTheme("dark");
  }

  /** Every visible button of the chat with its contrast figures (WCAG ratios). */
  buttonContrast(): Promise<ButtonContrast[]> {
    return this.evaluate<ButtonContrast[]>(CONTRAST_EXPRESSION);
  }

  /**
   * Checks that each visible button reads (text against its own background: 4.5:1) and shows
   * where it is (its background or border against what surrounds it: 3:1; links are text).
   */
  async assertButtonsVisible(theme: ThemeName, mustInclude: string[]): Promise<ButtonContrast[]> {
    await this.useTheme(theme);
    const buttons = await this.buttonContrast();
    for (const label of mustInclude)
      assert(
        buttons.some((b) => b.label === label),
        `the button "${label}" is visible in ${theme}: ${JSON.stringify(buttons.map((b) => b.label))}`,
      );
    const poor = buttons.filter((b) => b.text < 4.5 || (b.kind !== "link" && b.kind !== "icon" && b.boundary < 3));
    assert(poor.length === 0, `buttons below the contrast thresholds in ${theme}: ${JSON.stringify(poor)}`);
    return buttons;
  }

  /** Heights in the chat (CSS pixels) and of the side bar it sits in. */
  async layout(): Promise<{ viewport: number; messages: number; ask: number; composer: number; sidebar: number }> {
    const chat = await this.evaluate<{ viewport: number; messages: number; ask: number; composer: number }>(
      `(() => { const h = (id) => document.getElementById(id).getBoundingClientRect().height; return { viewport: window.innerHeight, messages: h("messages"), ask: h("ask"), composer: h("composer") }; })()`,
    );
    const sidebar = await this.ui.evaluate<number>(
      `document.querySelector(".part.sidebar").getBoundingClientRect().height`,
      "main",
    );
    return { ...chat, sidebar };
  }
}

export interface ButtonContrast {
  label: string;
  kind: "primary" | "secondary" | "link" | "icon";
  /** The text against the button's own (composited) background. */
  text: number;
  /** The button's background or border, whichever stands out more, against what surrounds it. */
  boundary: number;
}

/** Runs in the chat's document: composites the backgrounds the way the page paints them. */
const CONTRAST_EXPRESSION = `(() => {
  const parse = (c) => {
    // rgb()/rgba(), or color(srgb r g b / a) with 0..1 channels (what color-mix() computes to).
    const srgb = /color\\(srgb ([^)]+)\\)/.exec(c || "");
    const m = srgb ?? /rgba?\\(([^)]+)\\)/.exec(c || "");
    if (!m) return { r: 0, g: 0, b: 0, a: 0 };
    const [r, g, b, a] = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    const scale = srgb ? 255 : 1;
    return { r: r * scale, g: g * scale, b: b * scale, a: a === undefined || Number.isNaN(a) ? 1 : a };
  };
  const over = (top, bottom) => ({ r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a), b: top.b * top.a + bottom.b * (1 - top.a), a: 1 });
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (x, y) => { const [hi, lo] = [lum(x), lum(y)].sort((p, q) => q - p); return Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100; };
  const surround = (el) => {
    const chain = [];
    for (let n = el.parentElement; n; n = n.parentElement) chain.unshift(n);
    return chain.reduce((acc, n) => over(parse(getComputedStyle(n).backgroundColor), acc), { r: 255, g: 255, b: 255, a: 1 });
  };
  return [...document.querySelectorAll("button")]
    .filter((b) => b.offsetParent !== null && b.getBoundingClientRect().width > 0)
    .map((b) => {
      const style = getComputedStyle(b);
      const around = surround(b);
      const own = over(parse(style.backgroundColor), around);
      const border = parseFloat(style.borderTopWidth) > 0 ? over(parse(style.borderTopColor), own) : own;
      const kind = b.classList.contains("link") ? "link" : b.classList.contains("icon") ? "icon" : b.classList.contains("secondary") ? "secondary" : "primary";
      return { label: b.textContent.trim(), kind, text: ratio(over(parse(style.color), own), own), boundary: Math.max(ratio(own, around), ratio(border, around)) };
    });
})()`;
