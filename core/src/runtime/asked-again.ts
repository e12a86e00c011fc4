/**
 * The sentence an edit's approval is asked again with when its file changed on disk while the
 * first question waited: nothing was written, and the change is computed again from the file as
 * it is now. Without it the same card came back after Approve with no word on why.
 */
export function changedWhileAsked(paths: readonly string[]): string {
  const shown = paths.slice(0, 3).join(", ") + (paths.length > 3 ? ` and ${paths.length - 3} more` : "");
  const subject = paths.length === 0 ? "The file" : paths.length === 1 ? shown : `A file of this edit (${shown})`;
  return `${subject} changed on disk while this approval waited, so nothing was written. The change shown is now made from the file as it is: approve again to write it.`;
}
