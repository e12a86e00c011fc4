// A separate process that uses the real task-store modules, for cross-process and SIGKILL tests.
// Usage: node task-worker.cjs <mode> <documentsRoot> [taskId]
//   claim     claims the task and holds it until killed          (prints "claimed <pid>"; 4th arg "delete" claims it for deletion)
//   messages  appends UI messages in a loop, durable at return   (prints "ack <id>" after each append returned)
//   messages-buffered  group-committed appends                   (prints "ack <id>" when the commit listener reports it)
//   journal   appends journal entries in a loop                  (prints "ack <seq>")
//   delete    deletes every task, slowly (a hook pauses)         (prints "deleted <id>")
//   open-dbs  opens (creating) the task's databases, then flushes the documents root once (a marker
//             the tracer must see) and exits without closing them (prints "opened")
import * as fs from "node:fs";
import * as path from "node:path";
import { silentLogger } from "../../../core/src/logging/logger.js";
import { InstanceLayout } from "../../../core/src/storage/instance-layout.js";
import { SqliteFactory } from "../../../core/src/storage/sqlite.js";
import { uiMessage } from "../../../core/src/tasks/message-store.js";
import { TaskFiles } from "../../../core/src/tasks/task-files.js";
import { TaskOwnership } from "../../../core/src/tasks/task-ownership.js";
import { openTaskStorage } from "../../../core/src/tasks/task-storage.js";
import { nth } from "../../helpers/items.js";

const args = process.argv.slice(2);
const mode = nth(args, 0, "argument (the mode)");
const documentsRoot = nth(args, 1, "argument (the documents root)");
/** The task of the claim, messages and journal modes (the delete mode deletes every task). */
const taskIdArgument = () => nth(args, 2, "argument (the task id)");
const purpose = args[3];
const layout = new InstanceLayout({
  dataRoot: path.join(documentsRoot, "..", "data"),
  homeRoot: path.join(documentsRoot, "..", "home"),
  documentsRoot,
});
const sqlite = new SqliteFactory(() => undefined);
const logger = silentLogger();
const out = (line: string) => process.stdout.write(line + "\n");

async function main() {
  if (mode === "claim") {
    new TaskOwnership(layout, logger).claim(taskIdArgument(), { purpose: purpose === "delete" ? "delete" : "run" });
    out(`claimed ${process.pid}`);
    setInterval(() => {}, 1000);
    return;
  }
  if (mode === "messages" || mode === "journal" || mode === "messages-buffered") {
    const taskId = taskIdArgument();
    new TaskOwnership(layout, logger).claim(taskId);
    const files = new TaskFiles(layout.task(taskId), sqlite, logger);
    if (mode === "messages-buffered") files.messages.onCommitted((ids) => out(ids.map((id) => `ack ${id}`).join("\n")));
    for (let i = 0; ; i++) {
      if (mode === "messages-buffered") {
        files.messages.append(uiMessage({ id: `m${i}`, text: `message ${i} `.repeat(20) }));
        out(`appended m${i}`);
        // Yield now and then so that the flush timer runs as it would in the sidecar.
        if (i % 7 === 0) await new Promise((r) => setTimeout(r, 1));
      } else if (mode === "messages") {
        files.messages.append(uiMessage({ id: `m${i}`, text: `message ${i} `.repeat(20) }), { durable: true });
        out(`ack m${i}`);
      } else {
        const seq = files.journal.append({
          kind: "turn",
          data: JSON.stringify({ i }),
          payload: `payload ${i}`.repeat(50),
          publications: [{ command: "c", data: String(i) }],
        });
        out(`ack ${seq}`);
      }
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
  }
  if (mode === "open-dbs") {
    const files = new TaskFiles(layout.task(taskIdArgument()), sqlite, logger);
    void [files.messages, files.journal, files.activities, files.metrics];
    const marker = fs.openSync(documentsRoot, "r");
    fs.fsyncSync(marker);
    fs.closeSync(marker);
    out("opened");
    process.exit(0);
  }
  if (mode === "delete") {
    const storage = await openTaskStorage({ layout, sqlite, logger });
    storage.deletion.registerHook({
      name: "slow",
      async onTaskDeleted(id) {
        out(`deleted ${id}`);
        await new Promise((r) => setTimeout(r, 30));
      },
      async onAllTasksDeleted() {
        out("all");
      },
    });
    await storage.deletion.delete("all");
    out("done");
    await storage.close();
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err) + "\n");
  process.exit(1);
});
