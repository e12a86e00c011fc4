/** Argument readers that accept what models actually send (e.g. "true" for true, a JSON string for an array). */
import { ToolError } from "./types.js";

export function requireString(input: Record<string, unknown>, name: string, tool: string): string {
  const value = input[name];
  if (typeof value !== "string")
    throw new ToolError(`${tool}: the parameter "${name}" is required and must be a string.`);
  return value;
}

export function requireNonEmptyString(input: Record<string, unknown>, name: string, tool: string): string {
  const value = requireString(input, name, tool);
  if (value.trim() === "") throw new ToolError(`${tool}: the parameter "${name}" must not be empty.`);
  return value;
}

export function optionalString(input: Record<string, unknown>, name: string, tool: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new ToolError(`${tool}: the parameter "${name}" must be a string.`);
  return value;
}

export function optionalBoolean(
  input: Record<string, unknown>,
  name: string,
  tool: string,
  fallback: boolean,
): boolean {
  const value = input[name];
  if (value === undefined || value === null || value === "") return fallback;
  if (typeof value === "boolean") return value;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ToolError(`${tool}: the parameter "${name}" must be true or false.`);
}

export function optionalStringList(input: Record<string, unknown>, name: string, tool: string): string[] {
  let value = input[name];
  if (value === undefined || value === null || value === "") return [];
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ToolError(`${tool}: the parameter "${name}" must be an array of strings.`);
    }
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new ToolError(`${tool}: the parameter "${name}" must be an array of strings.`);
  }
  return value;
}
