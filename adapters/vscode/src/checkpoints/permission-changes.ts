/**
 * How Compare and View Changes tell a change of a file's permissions (`FileChange.mode_before`,
 * `mode_after`: a private key opened to 644, a script made executable). The diff editor shows
 * text only: a change of permissions alone showed two equal sides, and one beside a change of
 * text was not seen at all. Pure.
 */

interface ModeChange {
  path: string;
  modeBefore: string;
  modeAfter: string;
}

/** "600 → 644", or undefined when the permissions did not change. */
export function permissionChange(file: ModeChange): string | undefined {
  return file.modeBefore ? `${file.modeBefore} → ${file.modeAfter}` : undefined;
}

/** The name a change of permissions alone is shown by: "id.key (permissions 600 → 644)". */
export function permissionsName(path: string, change: string): string {
  return `${path} (permissions ${change})`;
}

/** The notice naming the permission changes of a Compare or View Changes; undefined when none. */
export function permissionsNotice(title: string, files: readonly ModeChange[], shown = 5): string | undefined {
  const changed = files.filter((f) => f.modeBefore);
  if (!changed.length) return undefined;
  const more = changed.length > shown ? ` and ${changed.length - shown} more` : "";
  const named = changed.slice(0, shown).map((f) => `${f.path} ${permissionChange(f)}`);
  return `${title}: permissions changed: ${named.join(", ")}${more}.`;
}
