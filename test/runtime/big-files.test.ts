/**
 * A task over big files, through the real sidecar and the scripted model: the model gets a
 * window of a 21 MB log from read_file (not a refusal), and search_files finds a line in a
 * 1.3 MB file and in the 21 MB one, and names the file it could not search.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar } from "../helpers/sidecar.js";
import { recorded } from "../model-server/script.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

it("the model reads a window of a 21 MB file and finds a line in it and in a 1.3 MB one", async () => {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, "openai", {
    turns: [
      {
        toolCalls: [
          { name: "read_file", input: { path: "huge.txt", start_line: 1, end_line: 20 } },
          { name: "search_files", input: { path: ".", regex: "199999" } },
        ],
      },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ],
  });
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base, {
    "many.txt": `${Array.from({ length: 200_000 }, (_, i) => `row ${i}`).join("\n")}\n`,
  });
  const huge = `${Array.from({ length: 400_000 }, (_, i) => `log line ${i + 1} ${"x".repeat(40)}`).join("\n")}\n`;
  fs.writeFileSync(path.join(workspace, "huge.txt"), huge);
  fs.writeFileSync(path.join(workspace, "logo.png"), Buffer.from("PNG\u0000 199999"));
  await setAutoApproval(sidecar.clients, { readFiles: true });
  const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "read it", profileId });
  const events = await followUntilDone(sidecar.clients, taskId);
  const status = events.flatMap((e) => (e.event.case === "statusChanged" ? [e.event.value.status] : [])).pop();
  expect(status).toBe(TaskStatus.COMPLETED);
  const requests = await server.requests();
  expect(requests).toHaveLength(2);
  const tools = (recorded(requests, 1).body as { messages: { role: string; content: string }[] }).messages.filter(
    (m) => m.role === "tool",
  );
  expect(tools.map((m) => m.content)).toEqual([
    `${Array.from({ length: 20 }, (_, i) => `log line ${i + 1} ${"x".repeat(40)}`).join("\n")}\n\n` +
      `[Showing lines 1-20 of 400000 of huge.txt (${Buffer.byteLength(huge)} bytes). To read more, call read_file with start_line 21.]`,
    `Found 2 results.\n\nhuge.txt:199999: log line 199999 ${"x".repeat(40)}\nmany.txt:200000: row 199999\n\n` +
      "(Not searched: 1 file binary: logo.png.)",
  ]);
});
