/**
 * How Compare and View Changes show a change the checkpoints do not track (`FileChange.not_tracked`:
 * an ignored or excluded file or folder, "build/", that changed since the checkpoint; its
 * content there is unknown, and a restore leaves it as it is). Shown as its text with an empty
 * side, it read as a file emptied or created; its name in the diff says what it is instead, and
 * both sides say why there is nothing to compare. Pure.
 */

/** Beside the name of such a change in the diff editor. */
export const NOT_TRACKED_LABEL = "not tracked by checkpoints: not compared or restored";

export type ChangeStatus = "added" | "modified" | "deleted" | "unknown";

/** The name such a change is listed by: "build/other.js (not tracked by checkpoints: not compared or restored)". */
export function notTrackedName(path: string): string {
  return `${path.replace(/\/+$/, "")}${path.endsWith("/") ? "/" : ""} (${NOT_TRACKED_LABEL})`;
}

/** What each side of its diff reads: the checkpoint's (left) and now (right). */
export function notTrackedSides(path: string, status: ChangeStatus): { before: string; after: string } {
  const folder = path.endsWith("/");
  const it = folder ? "This folder" : "This file";
  // Short lines: the diff editor's sides are narrow.
  const why = `${it} is not tracked by checkpoints (ignored, excluded or too large),\nso its content at the checkpoint is unknown:\nit is not compared, and a restore leaves it as it is.`;
  const now =
    status === "deleted"
      ? `${folder ? "This folder was" : "This file was"} deleted since the checkpoint.`
      : status === "added"
        ? `${folder ? "This folder was" : "This file was"} created since the checkpoint.`
        : folder
          ? "Files in this folder changed since the checkpoint."
          : "This file changed since the checkpoint.";
  return { before: `(At the checkpoint: not tracked.)\n\n${why}\n`, after: `(Now: ${now})\n\n${why}\n` };
}

/** The notice when every change since is one the checkpoints do not track: never "no changes". */
export function onlyNotTrackedNotice(title: string, paths: readonly string[], shown = 5): string {
  const n = paths.length;
  const more = n > shown ? ` and ${n - shown} more` : "";
  return `${title}: no tracked file changed; ${n} change${n === 1 ? "" : "s"} not tracked by checkpoints (not compared or restored): ${paths.slice(0, shown).join(", ")}${more}.`;
}
