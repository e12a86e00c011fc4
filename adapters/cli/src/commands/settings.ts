import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { SettingSource, SettingsScope } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import { checkFlags, checkPositionals, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { printJson, withSidecar, type CliContext } from "../session.js";

function scopeOf(args: ParsedArgs): { scope: SettingsScope; workspaceRoot: string; taskId: string } {
  const workspaceRoot = stringFlag(args, "workspace") ?? "";
  const taskId = stringFlag(args, "task") ?? "";
  const scope = taskId ? SettingsScope.TASK : workspaceRoot ? SettingsScope.WORKSPACE : SettingsScope.GLOBAL;
  return { scope, workspaceRoot, taskId };
}

/** dline settings [get [KEY] | set KEY JSON] [--workspace DIR] [--task ID] */
export async function settingsCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["workspace", "task"]);
  checkPositionals(
    args,
    args.positionals[0] === "set" ? 3 : 2,
    args.positionals[0] === "set" ? "quote the JSON value: dline settings set KEY '{\"a\": 1}'" : "",
  );
  const [verb = "get", key, value] = args.positionals;
  return withSidecar(ctx, async (clients) => {
    if (verb === "get" && key) {
      const res = await clients.settings.resolveSetting({
        key,
        workspaceRoot: stringFlag(args, "workspace") ?? "",
        taskId: stringFlag(args, "task") ?? "",
      });
      const out = {
        key,
        value: res.value ? toJson(ValueSchema, res.value) : null,
        source: SettingSource[res.source].toLowerCase(),
      };
      if (ctx.json) printJson(ctx, out);
      else ctx.out.write(`${key} = ${JSON.stringify(out.value)} (from ${out.source})\n`);
      return 0;
    }
    if (verb === "get") {
      const res = await clients.settings.getSettings(scopeOf(args));
      printJson(ctx, { settings: res.settings ?? {}, revision: res.revision.toString() });
      return 0;
    }
    if (verb === "set") {
      if (!key || value === undefined) throw new UsageError("dline settings set KEY JSON-VALUE");
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        parsed = value; // a bare word is a string
      }
      const res = await clients.settings.updateSettings({ ...scopeOf(args), patch: { [key]: parsed } as never });
      if (ctx.json) printJson(ctx, { revision: res.revision.toString() });
      else ctx.out.write(`set ${key} (revision ${res.revision})\n`);
      return 0;
    }
    throw new UsageError(`dline settings: unknown verb "${verb}" (get or set).`);
  });
}
