import { applyPatch, parsePatch, reversePatch } from "diff";

/** The two texts a diff editor shows for a change the core sent as a unified diff only. */
export interface EditSides {
  original: string;
  modified: string;
}

/**
 * A change too large for the core to send whole, rebuilt from the file as this editor has it and
 * the core's unified diff: before an approval the file is the original (the patch gives what the
 * edit writes); after it, the file is the result (the reversed patch gives what it was).
 * Undefined when the patch does not fit the file (it changed since), so the diff itself is shown.
 */
export function rebuildSides(current: string, diff: string, proposal: boolean): EditSides | undefined {
  let patch;
  try {
    [patch] = parsePatch(diff);
  } catch {
    return undefined;
  }
  if (!patch || patch.hunks.length === 0) return undefined;
  const other = applyPatch(current, proposal ? patch : reversePatch(patch));
  if (other === false) return undefined;
  return proposal ? { original: current, modified: other } : { original: other, modified: current };
}
