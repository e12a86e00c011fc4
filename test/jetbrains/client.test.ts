/**
 * The JetBrains adapter in `npm test`: the Maven build of adapters/jetbrains (the Kotlin client
 * library and its JUnit tests, which drive the real dist/dline-core and the scripted model server,
 * then the compat module: the client's tests compiled as a separate consumer with the plugin's
 * pinned Kotlin, run on the Kotlin libraries of the lowest supported IDE), then the conformance
 * scenario through the Kotlin client, which must leave the same state as the CLI. Maven downloads
 * its plugins and dependencies once into ~/.m2. The plugin itself (Gradle, IntelliJ SDK) is not
 * built here; what it pins is checked against what the client is built for.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { cliDriver } from "../conformance/drivers/cli-driver.js";
import { play } from "../conformance/play.js";
import { assertBinaryBuilt, repoRoot } from "../helpers/sidecar.js";
import { kotlinDriver } from "./kotlin-driver.js";
import { captured, entry } from "../helpers/items.js";

const jetbrainsDir = path.join(repoRoot, "adapters", "jetbrains");
const pluginDir = path.join(jetbrainsDir, "plugin");

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

function read(file: string): string {
  return fs.readFileSync(path.join(jetbrainsDir, file), "utf8");
}

/** The one match of `pattern`'s first group in `text`, or a failure naming what was looked for. */
function pinned(text: string, pattern: RegExp, what: string): string {
  const match = pattern.exec(text);
  return captured(match, what);
}

/**
 * What each IntelliJ Platform build bundles, from JetBrains' "Configuring Kotlin Support" page
 * (bundled stdlib and kotlinx-coroutines tables) and the platform's published Maven metadata
 * (kotlin-reflect): the plugin's since-build must be one of these, and the client must be built
 * for and tested on its versions. Coroutines: the upstream release the IDE's fork is based on.
 */
const ideKotlin: Record<string, { stdlib: string; reflect: string; coroutines: string; api: string }> = {
  "243": { stdlib: "2.0.21", reflect: "2.0.21", coroutines: "1.8.0", api: "2.0" },
};

/** The plugin's pinned Kotlin (the Kotlin Gradle plugin version in build.gradle.kts). */
function pluginKotlin(): string {
  return pinned(
    fs.readFileSync(path.join(pluginDir, "build.gradle.kts"), "utf8"),
    /id\("org\.jetbrains\.kotlin\.jvm"\) version "([^"]+)"/,
    "the Kotlin plugin version in build.gradle.kts",
  );
}

describe("JetBrains Kotlin client", () => {
  it("pins in the plugin the Kotlin the client is built with and for", () => {
    const gradle = fs.readFileSync(path.join(pluginDir, "build.gradle.kts"), "utf8");
    const parent = read("pom.xml");
    const client = read("client/pom.xml");
    const sinceBuild = pinned(gradle, /sinceBuild = "(\d+)"/, "sinceBuild in build.gradle.kts");
    expect(ideKotlin[sinceBuild], `no known Kotlin versions for since-build ${sinceBuild}`).toBeDefined();
    const ide = entry(ideKotlin, sinceBuild, "since-build");
    // The client: compiled by the plugin's Kotlin, for the IDE's API version, against its libraries.
    expect(pinned(client, /<kotlin\.version>([^<]+)</, "kotlin.version in client/pom.xml")).toBe(pluginKotlin());
    expect(pinned(parent, /<ide\.kotlin\.version>([^<]+)</, "ide.kotlin.version")).toBe(ide.stdlib);
    expect(ide.reflect).toBe(ide.stdlib); // one property covers both in the pom
    expect(pinned(parent, /<ide\.coroutines\.version>([^<]+)</, "ide.coroutines.version")).toBe(ide.coroutines);
    expect(pinned(parent, /<kotlin\.api\.version>([^<]+)</, "kotlin.api.version")).toBe(ide.api);
    // The plugin: the same API and language version, the IDE's stdlib, reflect and coroutines left out.
    const kotlinVersion = `KotlinVersion.KOTLIN_${ide.api.replace(".", "_")}`;
    expect(gradle).toContain(`apiVersion.set(${kotlinVersion})`);
    expect(gradle).toContain(`languageVersion.set(${kotlinVersion})`);
    expect(gradle).toContain('exclude(group = "org.jetbrains.kotlin")');
    expect(gradle).toContain('exclude(group = "org.jetbrains.kotlinx")');
    expect(fs.readFileSync(path.join(pluginDir, "gradle.properties"), "utf8")).toMatch(
      /^kotlin\.stdlib\.default\.dependency = false$/m,
    );
  });

  it(
    "builds from proto/ with Maven, passes its JUnit 5 tests against the real sidecar, and as the plugin's consumer on the IDE's Kotlin",
    { timeout: 25 * 60_000 },
    async () => {
      const probe = spawnSync("mvn", ["-v"], { encoding: "utf8" });
      if (probe.error || probe.status !== 0) {
        throw new Error(
          "mvn is not installed: the JetBrains client needs Maven 3.8+ and a JDK 17 (scripts/setup-test.sh installs them; npm test runs it).",
        );
      }
      assertBinaryBuilt();
      // clean: classes of an earlier compiler must not stay on the classpath of this one.
      const args = ["-q", "-B", "clean", "test", `-Dplugin.kotlin.version=${pluginKotlin()}`];
      const { code, output } = await run("mvn", args, jetbrainsDir);
      // On failure, show what Maven said (surefire's summary is at the end).
      if (code !== 0) console.error(output.slice(-20_000));
      expect(code, `mvn ${args.join(" ")} failed in adapters/jetbrains (output above)`).toBe(0);
      // Both modules ran their tests (a skipped module would pass silently).
      for (const module of ["client", "compat"]) {
        expect(
          fs
            .readdirSync(path.join(jetbrainsDir, module, "target", "surefire-reports"))
            .some((f) => f.includes("IdeRuntimeTest")),
        ).toBe(true);
      }
    },
  );

  it(
    "leaves the same files, databases and checkpoint trees as the CLI in the conformance scenario",
    { timeout: 300_000 },
    async () => {
      const cli = await play(cliDriver);
      const kotlin = await play(kotlinDriver);
      // The scenario did something (test/conformance checks what), so equal snapshots are not equally empty.
      expect(cli.result.compare.length).toBeGreaterThan(0);
      expect(cli.afterEdit.tasks).toHaveLength(1);
      expect(cli.afterDelete.tasks).toHaveLength(0);
      expect(kotlin.result.compare).toEqual(cli.result.compare);
      expect(kotlin.afterEdit).toEqual(cli.afterEdit);
      expect(kotlin.afterDelete).toEqual(cli.afterDelete);
    },
  );
});
