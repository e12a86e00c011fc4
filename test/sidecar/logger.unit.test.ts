import { describe, expect, it } from "vitest";
import { createLogger } from "../../core/src/logging/logger.js";

describe("a log record", () => {
  it("keeps its own time, level, pid, scope and message whatever the fields are named", () => {
    const lines: string[] = [];
    const logger = createLogger({ write: (l) => lines.push(l), close: () => {} }).child("tasks");
    // As the claim recovery logged the dead owner's pid: the record then named the wrong writer.
    logger.info("recovered a dead owner's task claim", { pid: 1, level: "error", msg: "other", file: "a.claim" });
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(record).toMatchObject({
      level: "info",
      pid: process.pid,
      scope: "core.tasks",
      msg: "recovered a dead owner's task claim",
      file: "a.claim",
    });
  });
});
