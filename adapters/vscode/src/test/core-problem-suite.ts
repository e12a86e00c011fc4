/**
 * A sidecar that cannot start, with the VSIX installed and `dline.corePath` (machine-scoped,
 * so in the Remote tab of code-server's settings) naming a broken program: the person is told
 * once, at the first failed start, with Open Settings on the right tab; the chat says so; and
 * it all clears when the setting names a working core.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { ChatUi } from "./chat-ui.js";
import { activateDline, notificationTexts, required } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

// With the smoke-test driver VS Code shows no toasts: notifications are read in the notifications center.
const MESSAGE = "the core cannot start";

export function defineCoreProblemSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  const chat = new ChatUi(ui);
  const userData = required("DLINE_E2E_USER_DATA");
  const machineSettings = path.join(userData, "Machine", "settings.json");
  const notifications = async () => {
    return (await notificationTexts(ui)).filter((t) => t.includes(MESSAGE));
  };
  /** The "Dline" output channel's log file, where the supervisor writes each restart. */
  const extensionLog = () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith("Dline.log")) found.push(p);
      }
    };
    walk(path.join(userData, "logs"));
    return found.map((f) => fs.readFileSync(f, "utf8")).join("\n");
  };

  suite.test(
    "a core that exits before its handshake is reported once, at its first failed start, in a notification and in the chat",
    async () => {
      const activated = Date.now();
      const api = await activateDline();
      await waitFor("the notification", async () => (await notifications()).length > 0, 30_000);
      // A figure for the report (never asserted: the machine's load decides it).
      fs.writeFileSync(
        path.join(outDir, "report-delay.json"),
        JSON.stringify({ fromActivationMs: Date.now() - activated }),
      );
      const restarts = (log: string) =>
        [...log.matchAll(/restarting the core in \d+ ms \(attempt (\d+)\)/g)].map((m) => Number(m[1]));
      // Reported at the first failure: the log says so before it schedules the first retry.
      const [told, firstRetry] = await waitFor("the report and the first retry in the log", () => {
        const log = extensionLog();
        const found: [number, number] = [
          log.indexOf("told the person the core cannot start"),
          log.search(/restarting the core in \d+ ms \(attempt 1\)/),
        ];
        return found.every((i) => i >= 0) && found;
      });
      assert(firstRetry > told, `the report (at ${told}) comes before the first retry (at ${firstRetry}) in the log`);
      await chat.waitFor("the chat's header", ".core-status.failed", "exited (3) before its handshake");
      // The restarts go on; the person is not told again.
      await waitFor("the third failed start", () => Math.max(0, ...restarts(extensionLog())) >= 3, 60_000);
      assertEqual((await notifications()).length, 1, "notifications about the core");
      await vscode.commands.executeCommand("notifications.hideList");
      assert(api.coreFailing(), "the extension knows the core cannot start");
      const status = await ui.request({ action: "texts", selector: ".statusbar-item", frame: "main" });
      assert(
        status.some((s) => s.includes("Dline core")),
        `status bar: ${JSON.stringify(status)}`,
      );
      await chat.screenshots("core-failed");
    },
    120_000,
  );

  suite.test("Open Settings opens the Remote settings on dline.corePath", async () => {
    await chat.click('[data-action="core-open-settings"]');
    const shown = await waitFor("the settings editor on the setting", async () => {
      const [json] = await ui.request({
        action: "evaluate",
        frame: "main",
        expression: `(() => {
          const editor = document.querySelector(".settings-editor");
          if (!editor) return null;
          const tab = editor.querySelector(".settings-tabs-widget .action-label.checked");
          const titles = [...editor.querySelectorAll(".setting-item-contents .setting-item-label, .setting-item-contents .setting-item-title")].map((n) => n.textContent);
          return { tab: tab ? tab.textContent : "", titles };
        })()`,
      });
      // No answer yet reads as null: waitFor asks again.
      const value = JSON.parse(json ?? "null") as { tab: string; titles: string[] } | null;
      return value !== null && value.titles.some((t) => t.includes("Core Path")) ? value : undefined;
    });
    assert(shown.tab.includes("Remote"), `the settings tab: ${JSON.stringify(shown)}`);
    await ui.request({ action: "screenshot", name: "core-settings-remote" });
  });

  suite.test(
    "naming a working core in the setting brings it back and clears the failure",
    async () => {
      const api = await activateDline();
      const working = path.join(required("DLINE_E2E_INSTALLED"), "bin", "dline-core");
      // What a person does in that tab: the machine's settings file changes.
      fs.writeFileSync(machineSettings, JSON.stringify({ "dline.corePath": working }));
      await waitFor(
        "the core running",
        async () => (await api.clients().catch(() => undefined)) !== undefined && !api.coreFailing(),
        60_000,
      );
      assertEqual(fs.readlinkSync(`/proc/${api.corePid()}/exe`), working, "the core's executable");
      await waitFor("the chat's header cleared", async () => (await chat.texts(".core-status")).length === 0);
      await waitFor(
        "the status bar item gone",
        async () =>
          !(await ui.request({ action: "texts", selector: ".statusbar-item", frame: "main" })).some((s) =>
            s.includes("Dline core"),
          ),
      );
      await chat.screenshots("core-recovered", ["dark"]);
    },
    90_000,
  );
}
