import * as fs from "node:fs";
import * as path from "node:path";
import { writeToStdio } from "./stdio.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines carry `scope` (e.g. "storage"). */
  child(scope: string): Logger;
}

export interface LogSink {
  write(line: string): void;
  close(): void;
}

/**
 * Writes one line per record to stderr and to an append-only log file. stdout is reserved
 * for the handshake line, so nothing here ever touches it. Callers never pass secret values:
 * fields are for ids, paths, counts and codes.
 */
export class FileAndStderrSink implements LogSink {
  private fd: number | undefined;

  constructor(readonly file: string | undefined) {
    if (file) {
      try {
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
        this.fd = fs.openSync(file, "a", 0o600);
      } catch (err) {
        process.stderr.write(`dline-core: cannot open log file ${file}: ${(err as Error).message}\n`);
      }
    }
  }

  write(line: string): void {
    try {
      writeToStdio(2, line);
    } catch {
      // A closed stderr (the editor went away) loses only its copy: the log file has the line.
    }
    if (this.fd !== undefined) {
      try {
        fs.writeSync(this.fd, line);
      } catch {
        // A full disk must not take the sidecar down: stderr still has the line.
      }
    }
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

export function createLogger(sink: LogSink, minLevel: LogLevel = "info", scope = "core"): Logger {
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (levelRank[level] < levelRank[minLevel]) return;
    // A field cannot stand in for the record's own keys (a dead owner's "pid" logged as the writer's).
    const base = { t: new Date().toISOString(), level, pid: process.pid, scope, msg: message };
    const record = { ...base, ...fields, ...base };
    sink.write(JSON.stringify(record) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (childScope) => createLogger(sink, minLevel, `${scope}.${childScope}`),
  };
}

/** A logger that drops everything (for in-process unit tests of domain modules). */
export function silentLogger(): Logger {
  return createLogger({ write: () => {}, close: () => {} });
}
