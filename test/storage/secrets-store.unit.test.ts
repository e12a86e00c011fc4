import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type DlineError } from "../../core/src/errors.js";
import { FileLocks } from "../../core/src/storage/file-lock.js";
import { SecretsStore } from "../../core/src/storage/secrets-store.js";
import { corruptCopies, modeOf, recordingLogger, tempLayout } from "./helpers.js";
import { nth } from "../helpers/items.js";

const SECRET = "sk-test-9f8e7d6c5b4a-never-print-me";

function store() {
  const { layout } = tempLayout();
  const { logger, lines } = recordingLogger();
  return { layout, lines, secrets: new SecretsStore(layout, new FileLocks(logger), logger) };
}

describe("SecretsStore", () => {
  it("stores each kind of secret in its own 0600 file inside a 0700 folder", async () => {
    const { layout, secrets, lines } = store();
    await secrets.set("p1", "api_key", SECRET);
    await secrets.set("p1", "aws_secret", `${SECRET}-aws`);
    await secrets.set("p1", "oauth", `{"token":"${SECRET}-oauth"}`);
    await secrets.set("", "telemetryToken", `${SECRET}-typed`);
    for (const file of [
      layout.apiKeysJson,
      layout.providerSecretsJson,
      layout.oauthCredentialsJson("p1"),
      layout.secretsJson,
    ]) {
      expect(modeOf(file)).toBe(0o600);
    }
    expect(modeOf(layout.secretsDir)).toBe(0o700);
    expect(JSON.parse(fs.readFileSync(layout.apiKeysJson, "utf8"))).toEqual({ p1: SECRET });
    expect(JSON.parse(fs.readFileSync(layout.providerSecretsJson, "utf8"))).toEqual({
      p1: { aws_secret: `${SECRET}-aws` },
    });
    expect((await secrets.namesByProfile(["p1"])).get("p1")).toEqual(["api_key", "aws_secret", "oauth"]);
    expect(await secrets.get("p1", "api_key")).toBe(SECRET);
    expect(lines.join("")).not.toContain(SECRET);
  });

  it("repairs files and folder found with wider modes", async () => {
    const { layout, secrets } = store();
    await secrets.set("p1", "api_key", SECRET);
    fs.chmodSync(layout.apiKeysJson, 0o644);
    fs.chmodSync(layout.secretsDir, 0o755);
    expect(await secrets.get("p1", "api_key")).toBe(SECRET);
    expect(modeOf(layout.apiKeysJson)).toBe(0o600);
    expect(modeOf(layout.secretsDir)).toBe(0o700);
  });

  it("clears one secret and all of a deleted profile's secrets", async () => {
    const { layout, secrets } = store();
    await secrets.set("p1", "api_key", SECRET);
    await secrets.set("p1", "region_key", SECRET);
    await secrets.set("p1", "oauth", SECRET);
    await secrets.set("p2", "api_key", SECRET);
    await secrets.clear("p1", "region_key");
    expect((await secrets.namesByProfile(["p1"])).get("p1")).toEqual(["api_key", "oauth"]);
    await secrets.deleteProfile("p1");
    expect((await secrets.namesByProfile(["p1", "p2"])).get("p1")).toEqual([]);
    expect(fs.existsSync(layout.oauthCredentialsJson("p1"))).toBe(false);
    expect(await secrets.get("p2", "api_key")).toBe(SECRET);
  });

  it("keeps a malformed secrets file aside without quoting its content", async () => {
    const { layout, secrets, lines } = store();
    fs.mkdirSync(layout.secretsDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(layout.apiKeysJson, `{"p1": "${SECRET}`, { mode: 0o600 });
    const err = (await secrets.set("p1", "api_key", "new").catch((e: unknown) => e)) as DlineError;
    expect(err.code).toBe("data_loss");
    expect(err.message).not.toContain(SECRET);
    const copy = nth(corruptCopies(layout.apiKeysJson), 0, "corrupt copy");
    expect(err.message).toContain(copy);
    expect(fs.readFileSync(copy, "utf8")).toContain(SECRET);
    expect(lines.join("")).not.toContain(SECRET);
    expect(path.dirname(copy)).toBe(layout.secretsDir);
  });

  it("refuses ids that would leave the secrets folder", async () => {
    const { secrets } = store();
    await expect(secrets.set("../x", "api_key", SECRET)).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(secrets.set("p1", "a/b", SECRET)).rejects.toMatchObject({ code: "invalid_argument" });
  });
});
