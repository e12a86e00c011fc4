/**
 * Names a terminal prints the same although their bytes differ: the same letters in another
 * Unicode form (an NFC "café.txt", é one character, beside an NFD one, e and a combining accent,
 * which macOS tools and some archives write). Listed bare, they read as one file twice. Each
 * such name gets a note saying which form it is; other names get none.
 */
export function unicodeFormNotes(paths: readonly string[]): Map<string, string> {
  const byLetters = new Map<string, Set<string>>();
  for (const p of paths) {
    const key = p.normalize("NFC");
    const same = byLetters.get(key) ?? new Set<string>();
    same.add(p);
    byLetters.set(key, same);
  }
  const notes = new Map<string, string>();
  for (const same of byLetters.values()) {
    if (same.size < 2) continue;
    for (const p of same) notes.set(p, ` (${formOf(p)})`);
  }
  return notes;
}

function formOf(p: string): string {
  if (p === p.normalize("NFC")) return "name in composed Unicode, NFC";
  if (p === p.normalize("NFD")) return "name in decomposed Unicode, NFD";
  return "name in mixed Unicode forms";
}
