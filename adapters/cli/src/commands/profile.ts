import { toJson } from "@bufbuild/protobuf";
import { ProfileSchema } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import { checkFlags, checkPositionals, numberFlag, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { printJson, withSidecar, type CliContext } from "../session.js";

/**
 * dline profile add ID --provider anthropic|openai [--base-url URL] --model M [--context-window N]
 *   [--max-output-tokens N] [--input-price P] [--output-price P] [--cache-read-price P]
 *   [--cache-write-price P] [--zero-cost] [--first-byte-timeout S] [--reasoning-effort E]
 *   [--thinking-budget N] [--tool-format native|xml] [--api-key-env VAR] [--default]
 * dline profile list | dline profile rm ID
 * Prices left out come from the core's price table for well-known models (the cost is shown as
 * unknown for others). The key is read from an environment variable, never from the command
 * line (shell history).
 */
export async function profileCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, [
    "provider",
    "base-url",
    "model",
    "context-window",
    "max-output-tokens",
    "input-price",
    "output-price",
    "cache-read-price",
    "cache-write-price",
    "zero-cost",
    "first-byte-timeout",
    "reasoning-effort",
    "thinking-budget",
    "tool-format",
    "api-key-env",
    "name",
    "default",
  ]);
  checkPositionals(args, args.positionals[0] === "list" ? 1 : 2);
  const [verb, id] = args.positionals;
  return withSidecar(ctx, async (clients) => {
    if (verb === "list") {
      const res = await clients.settings.listProfiles({});
      if (ctx.json) printJson(ctx, { profiles: res.profiles.map((p) => toJson(ProfileSchema, p)) });
      else
        for (const p of res.profiles)
          ctx.out.write(
            `${p.id}  ${p.provider}  ${p.model}  ${p.baseUrl}${p.secretsSet.includes("api_key") ? "  (key set)" : ""}  prices: ${p.priceSource || "unknown"}\n`,
          );
      return 0;
    }
    if (verb === "rm") {
      if (!id) throw new UsageError("dline profile rm ID");
      await clients.settings.deleteProfile({ id });
      return 0;
    }
    if (verb !== "add") throw new UsageError("dline profile add|list|rm");
    if (!id) throw new UsageError("dline profile add ID --provider anthropic|openai --model MODEL");
    const provider = stringFlag(args, "provider");
    if (provider !== "anthropic" && provider !== "openai")
      throw new UsageError("--provider takes anthropic or openai.");
    const model = stringFlag(args, "model");
    if (!model) throw new UsageError("--model is required.");
    const res = await clients.settings.upsertProfile({
      profile: {
        id,
        name: stringFlag(args, "name") ?? id,
        provider,
        baseUrl:
          stringFlag(args, "base-url") ??
          (provider === "anthropic" ? "https://api.anthropic.com" : "https://api.openai.com/v1"),
        model,
        contextWindow: BigInt(numberFlag(args, "context-window") ?? (provider === "anthropic" ? 200_000 : 128_000)),
        maxOutputTokens: BigInt(numberFlag(args, "max-output-tokens") ?? 0),
        inputPricePerMtok: numberFlag(args, "input-price") ?? 0,
        outputPricePerMtok: numberFlag(args, "output-price") ?? 0,
        cacheReadPricePerMtok: numberFlag(args, "cache-read-price") ?? 0,
        cacheWritePricePerMtok: numberFlag(args, "cache-write-price") ?? 0,
        zeroCost: args.flags.has("zero-cost"),
        firstByteTimeoutSeconds: numberFlag(args, "first-byte-timeout") ?? 0,
        reasoningEffort: stringFlag(args, "reasoning-effort") ?? "",
        thinkingBudgetTokens: BigInt(numberFlag(args, "thinking-budget") ?? 0),
        toolCallFormat: stringFlag(args, "tool-format") ?? "",
      },
    });
    const keyVar =
      stringFlag(args, "api-key-env") ?? (provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
    const key = process.env[keyVar];
    if (key) await clients.settings.setSecret({ profileId: id, name: "api_key", value: key });
    if (args.flags.has("default")) await clients.settings.updateSettings({ scope: 1, patch: { defaultProfileId: id } });
    if (ctx.json)
      printJson(ctx, { profile: res.profile ? toJson(ProfileSchema, res.profile) : null, apiKeySet: Boolean(key) });
    else
      ctx.out.write(
        `profile ${id} saved${key ? ` (key from $${keyVar})` : ` (no key: $${keyVar} is not set)`}; prices: ${res.profile?.priceSource || "unknown"}\n`,
      );
    return 0;
  });
}
