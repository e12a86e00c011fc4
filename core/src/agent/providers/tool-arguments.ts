/** Parses a tool call's streamed argument text; an empty text means "no arguments". */
export function parseToolArguments(text: string): { input: Record<string, unknown> | undefined; parseError?: string } {
  if (text.trim() === "") return { input: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return { input: value as Record<string, unknown> };
    return { input: undefined, parseError: "the arguments are not a JSON object" };
  } catch (err) {
    return { input: undefined, parseError: `the arguments are not valid JSON (${(err as Error).message})` };
  }
}
