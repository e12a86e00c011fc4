/**
 * An order for names shown to a person or a model (files, rules, capabilities): letters' case
 * set aside first ("a.md", "B.md", "c.md"), then code units, so equal names apart from case
 * still have one order. Not `localeCompare`: a process's first collation loads ICU's collator
 * (9-13 ms in the sidecar's Node), which every task paid for its first listing.
 */
export function compareNames(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
