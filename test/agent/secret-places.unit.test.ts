/**
 * Which plain commands read where secrets are (never auto-approved as "safe"), as the shell
 * would expand their words. The attacks on the real sidecar are in test/security.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { reachesSecretPlaces } from "../../core/src/agent/tools/secret-places.js";

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "secret-places-")));
const home = path.join(base, "home");
const storage = path.join(home, ".dline");
const workspace = path.join(base, "project");
fs.mkdirSync(path.join(storage, "data", "secrets"), { recursive: true });
fs.mkdirSync(workspace);
fs.symlinkSync(path.join(storage, "data"), path.join(workspace, "innocent"));
const env = { HOME: home, DLINE_DIR: storage };
const reaches = (command: string, cwd = workspace) => reachesSecretPlaces(command, cwd, [storage], env);

describe("a command that reaches where secrets are", () => {
  it("names /proc, the storage, a folder holding them, or a link into them", () => {
    for (const command of [
      "base64 -w0 /proc/$PPID/environ",
      "strings /proc/*/environ",
      "cat /proc/self/status",
      "rev ~/.dline/data/secrets/api_keys.json",
      "grep -r sk- $DLINE_DIR",
      "grep -r sk- ${HOME}",
      "ls ~",
      "cat ~/.d*/data/secrets/x",
      "ls /",
      "cat innocent/secrets/api_keys.json",
      "od --file=/proc/1/maps",
      "cat '/proc/1/cmdline'",
    ])
      expect(reaches(command), command).toBe(true);
  });

  it("leaves ordinary commands in the workspace alone", () => {
    for (const command of [
      "ls src",
      "git status --short",
      "npm test",
      "cat README.md",
      "npm run test:environment",
      "ls /usr/bin",
    ])
      expect(reaches(command), command).toBe(false);
  });

  it("takes every command as reaching them in a workspace that holds the storage (the home folder)", () => {
    expect(reaches("ls", home)).toBe(true);
    expect(reaches("rg key", home)).toBe(true);
  });
});
