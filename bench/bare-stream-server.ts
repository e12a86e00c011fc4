// Baseline for bench/task-stream.bench.ts: a bare connect-node server whose Subscribe streams N
// events with a 100-byte text each, as fast as it can. Runs as its own process, like the sidecar.
import * as http from "node:http";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { TaskService } from "../core/src/gen/dline/v1/task_pb.js";

const text = "x".repeat(100);
const handler = connectNodeAdapter({
  routes: (router) =>
    router.service(TaskService, {
      async *subscribe(req) {
        const n = Number(req.afterSeq);
        for (let i = 1; i <= n; i++) {
          yield {
            event: {
              seq: BigInt(i),
              taskId: req.taskId,
              event: { case: "messageDelta", value: { messageId: "m", text } },
            },
          };
        }
      },
    }),
});
const server = http.createServer(handler);
server.listen(0, "127.0.0.1", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
