/**
 * Reading the JSON of a streamed wire format (JSON.parse gives `any`): an object's fields are
 * named by the reader and typed unknown, so each is checked where it is read.
 */

/** A JSON object with the fields `Field` a reader looks at, each unknown until checked. */
export type WireObject<Field extends string> = { readonly [K in Field]?: unknown };

/** `value` as a wire object when it is a JSON object (not null, not an array); else undefined. */
export function wireObject<Field extends string>(value: unknown): WireObject<Field> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
}

/** `value` when it is a JSON array (its items unknown); else undefined. */
export function wireArray(value: unknown): readonly unknown[] | undefined {
  return Array.isArray(value) ? (value as unknown[]) : undefined;
}
