// Compare and View Changes showed text only: a command's `chmod 644` of a private key (0600), or
// `chmod +x` of a script, was listed as a file whose two sides read the same, or not at all.
// The notice and the diff's title name the permissions then and now.
import { describe, expect, it } from "vitest";
import { permissionChange, permissionsNotice } from "../../adapters/vscode/src/checkpoints/permission-changes.js";

const file = (path: string, modeBefore = "", modeAfter = "") => ({ path, modeBefore, modeAfter });

describe("permission changes in Compare and View Changes", () => {
  it("names each file whose permissions changed, then and now", () => {
    expect(permissionChange(file("id.key", "600", "644"))).toBe("600 → 644");
    expect(permissionChange(file("a.txt"))).toBeUndefined();
    expect(
      permissionsNotice("Changes since snapshot", [
        file("a.txt"),
        file("id.key", "600", "644"),
        file("run.sh", "644", "755"),
      ]),
    ).toBe("Changes since snapshot: permissions changed: id.key 600 → 644, run.sh 644 → 755.");
  });

  it("says nothing when no permissions changed; past five files, how many more", () => {
    expect(permissionsNotice("New changes", [file("a.txt")])).toBeUndefined();
    const many = Array.from({ length: 7 }, (_, i) => file(`k${i}`, "600", "644"));
    expect(permissionsNotice("New changes", many)).toBe(
      "New changes: permissions changed: k0 600 → 644, k1 600 → 644, k2 600 → 644, k3 600 → 644, k4 600 → 644 and 2 more.",
    );
  });
});
