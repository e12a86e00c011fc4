/**
 * Reading an item a test expects to be there. An index read may be undefined (the tree is
 * typechecked with noUncheckedIndexedAccess); these return the item, or fail with a message that
 * says what was missing ("expected a 2nd recorded request, got 1") instead of a TypeError about
 * reading a property of undefined a few steps later.
 */

/** `items[index]`, or a failure naming the item and how many there were. */
export function nth<T>(items: readonly T[], index: number, what = "item"): T {
  if (!Number.isInteger(index) || index < 0) throw new Error(`expected ${what} at index ${index}, got ${items.length}`);
  if (index >= items.length) {
    throw new Error(`expected ${withArticle(ordinal(index + 1))} ${what}, got ${items.length}`);
  }
  return items.at(index) as T;
}

/** `Count` items of `T` as a tuple type: `Tuple<string, 2>` is `[string, string]`. */
export type Tuple<T, Count extends number, Built extends T[] = []> = Built["length"] extends Count
  ? Built
  : Tuple<T, Count, [...Built, T]>;

/** The first `count` of `items`, to destructure: `const [first, second] = firstOf(asks, 2, "ask")`. */
export function firstOf<T, Count extends number>(items: readonly T[], count: Count, what = "item"): Tuple<T, Count> {
  if (items.length < count) throw new Error(`expected at least ${count} ${what}s, got ${items.length}`);
  return items.slice(0, count) as Tuple<T, Count>;
}

/** The last of `items`, or a failure when there is none. */
export function lastOf<T>(items: readonly T[], what = "item"): T {
  if (items.length === 0) throw new Error(`expected at least one ${what}, got none`);
  return items.at(-1) as T;
}

/** `record[key]`, or a failure naming the key and the keys there are. */
export function entry<T>(record: Readonly<Partial<Record<string, T>>>, key: string, what = "entry"): T {
  const value = record[key];
  if (value === undefined) {
    throw new Error(`expected ${what} "${key}", got ${JSON.stringify(Object.keys(record))}`);
  }
  return value;
}

/** Capture group `group` of a match, or a failure naming what was looked for. */
export function captured(match: RegExpMatchArray | null, what: string, group = 1): string {
  const value = match?.[group];
  if (value === undefined) throw new Error(`expected ${what} to match, got no match`);
  return value;
}

/** 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st. */
function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  const suffix = ["th", "st", "nd", "rd"][n % 10] ?? "th";
  return `${n}${suffix}`;
}

function withArticle(word: string): string {
  return /^(8|11th$|18th$)/.test(word) ? `an ${word}` : `a ${word}`;
}
