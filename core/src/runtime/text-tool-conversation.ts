import { toTextToolBlocks } from "../agent/index.js";
import type { ConversationItem } from "./context-trim.js";

/**
 * The conversation for a request without native tools: earlier tool calls as the XML the model
 * writes and their results as text, so that the model sees its own format (Cline's).
 */
export function textToolItems(items: ConversationItem[]): ConversationItem[] {
  const calls = new Map<string, { name: string; input: unknown }>();
  for (const item of items)
    for (const b of item.blocks) if (b.type === "tool_use") calls.set(b.id, { name: b.name, input: b.input });
  return items.map((item) => ({ ...item, blocks: toTextToolBlocks(item.blocks, calls) }));
}
