import type { ChatState, ProfileForm } from "../chat/chat-state.js";
import type { Bridge } from "./bridge.js";
import { button, el, visibleText } from "./dom.js";

interface ProviderChoice {
  value: ProfileForm["provider"];
  label: string;
  baseUrl: string;
  model: string;
}
const DEFAULT_PROVIDER: ProviderChoice = {
  value: "anthropic",
  label: "Anthropic",
  baseUrl: "https://api.anthropic.com",
  model: "claude-sonnet-4-5",
};
const PROVIDERS: ProviderChoice[] = [
  DEFAULT_PROVIDER,
  {
    value: "openai",
    label: "OpenAI-compatible (OpenAI, OpenRouter, Ollama, LM Studio, vLLM…)",
    baseUrl: "https://api.openai.com/v1",
    model: "gpt-4o-mini",
  },
];

/**
 * Setting up a model inside the chat (the welcome view's and Configure Model's form): the
 * profile goes to the core (UpsertProfile), the key to its secret store (SetSecret), never
 * into VS Code's settings. Back to the chat once saved, with the typed prompt still there.
 */
export class ModelView {
  private readonly error = el("div", { class: "form-error", role: "alert" });
  private readonly profiles = el("div", { class: "profiles" });
  private readonly fields: {
    provider: HTMLSelectElement;
    id: HTMLInputElement;
    baseUrl: HTMLInputElement;
    model: HTMLInputElement;
    apiKey: HTMLInputElement;
    contextWindow: HTMLInputElement;
    makeDefault: HTMLInputElement;
  };
  private readonly save: HTMLButtonElement;

  constructor(
    root: HTMLElement,
    private readonly bridge: Bridge,
    private readonly close: () => void,
  ) {
    const provider = el(
      "select",
      { name: "provider" },
      PROVIDERS.map((p) => el("option", { value: p.value }, p.label)),
    );
    this.fields = {
      provider,
      id: el("input", { name: "id", placeholder: "e.g. work", required: true }),
      baseUrl: el("input", { name: "baseUrl", placeholder: DEFAULT_PROVIDER.baseUrl }),
      model: el("input", { name: "model", placeholder: DEFAULT_PROVIDER.model, required: true }),
      apiKey: el("input", {
        name: "apiKey",
        type: "password",
        autocomplete: "off",
        placeholder: "Leave empty for a local server without a key",
      }),
      contextWindow: el("input", { name: "contextWindow", type: "number", min: "1000", placeholder: "128000" }),
      makeDefault: el("input", { name: "makeDefault", type: "checkbox" }),
    };
    this.fields.makeDefault.checked = true;
    provider.addEventListener("change", () => {
      const p = PROVIDERS.find((x) => x.value === provider.value) ?? DEFAULT_PROVIDER;
      this.fields.baseUrl.placeholder = p.baseUrl;
      this.fields.model.placeholder = p.model;
    });
    this.save = button("Save", () => void this.submit(), "primary", { "data-action": "save-model" });
    const field = (label: string, input: HTMLElement, hint?: string) =>
      el(
        "label",
        { class: "field" },
        el("span", { class: "field-label" }, label),
        input,
        hint ? el("span", { class: "hint" }, hint) : undefined,
      );
    root.replaceChildren(
      el(
        "div",
        { class: "screen-head" },
        el("h2", {}, "Set up a model"),
        el("span", { class: "spacer" }),
        button("Back", this.close, "secondary", { "data-action": "close-model" }),
      ),
      this.profiles,
      el(
        "form",
        {
          class: "model-form",
          onsubmit: (e: Event) => {
            e.preventDefault();
            void this.submit();
          },
        },
        field("Provider", provider),
        field("Name", this.fields.id, "Letters, digits, _ . - (the profile's id)"),
        field("Base URL", this.fields.baseUrl, "Empty for the provider's own. For Ollama: http://localhost:11434/v1"),
        field("Model", this.fields.model),
        field("API key", this.fields.apiKey, "Kept by Dline on this machine, readable only by you"),
        field("Context window (tokens)", this.fields.contextWindow, "Empty: 128000"),
        el("label", { class: "check" }, this.fields.makeDefault, " Use this model for new tasks"),
        this.error,
        el("div", { class: "row" }, this.save, button("Cancel", this.close, "secondary")),
      ),
    );
  }

  render(state: ChatState): void {
    const prefs = state.preferences;
    this.profiles.replaceChildren(
      prefs.profiles.length === 0
        ? el(
            "p",
            { class: "hint" },
            "No model is set up yet. Dline also uses OPENAI_BASE_URL / OPENAI_MODEL / OPENAI_API_KEY or ANTHROPIC_API_KEY when VS Code is started with them.",
          )
        : el(
            "p",
            { class: "hint" },
            "Set up: ",
            prefs.profiles.map((p, i) => [
              i > 0 ? ", " : "",
              visibleText(`${p.name || p.id} (${p.model})`),
              p.id === prefs.defaultProfileId ? " — default" : "",
            ]),
          ),
    );
  }

  focus(): void {
    this.error.replaceChildren();
    (this.fields.id.value ? this.fields.model : this.fields.id).focus();
  }

  private async submit(): Promise<void> {
    const f = this.fields;
    const form: ProfileForm = {
      id: f.id.value.trim(),
      provider: f.provider.value === "openai" ? "openai" : "anthropic",
      baseUrl: f.baseUrl.value.trim(),
      model: f.model.value.trim(),
      apiKey: f.apiKey.value,
      contextWindow: Number(f.contextWindow.value) || 0,
      makeDefault: f.makeDefault.checked,
    };
    if (!/^[A-Za-z0-9_.-]+$/.test(form.id)) return this.fail("Give the model a name: letters, digits, _ . - only.");
    if (!form.model)
      return this.fail(
        "Name the model (e.g. " + (PROVIDERS.find((p) => p.value === form.provider)?.model ?? "") + ").",
      );
    this.save.disabled = true;
    try {
      const outcome = await this.bridge.request({ type: "saveProfile", form });
      if (!outcome.ok) return this.fail(outcome.error.message);
      f.apiKey.value = "";
      this.error.replaceChildren();
      this.close();
    } finally {
      this.save.disabled = false;
    }
  }

  private fail(message: string): void {
    this.error.replaceChildren(visibleText(message));
  }
}
