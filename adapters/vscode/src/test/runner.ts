import * as fs from "node:fs";
import * as path from "node:path";

/**
 * A small sequential test runner for the extension host (VS Code calls the `run()` of the
 * extensionTestsPath module and reports its outcome as the exit code). Results go to
 * `<out>/results.json` so that the harness outside the editor can show them test by test.
 */
export interface TestResult {
  name: string;
  ok: boolean;
  error?: string;
  durationMs: number;
}

interface TestCase {
  name: string;
  fn: () => Promise<void>;
  timeoutMs: number;
  settle?: () => Promise<void>;
}

export interface TestOptions {
  /**
   * Run after the test failed: brings the editor and the core to the state the later tests
   * start from (the test stays failed; the outcome of the settling is logged).
   */
  settle?: () => Promise<void>;
}

/** How long settling after a failed test may take. */
const SETTLE_TIMEOUT_MS = 120_000;

export class TestSuite {
  private readonly tests: TestCase[] = [];

  constructor(private readonly outDir: string) {}

  test(name: string, fn: () => Promise<void>, timeoutMs = 60_000, options: TestOptions = {}): void {
    this.tests.push({ name, fn, timeoutMs, settle: options.settle });
  }

  log(line: string): void {
    fs.appendFileSync(path.join(this.outDir, "extension-tests.log"), `${new Date().toISOString()} ${line}\n`);
  }

  async run(): Promise<TestResult[]> {
    fs.mkdirSync(this.outDir, { recursive: true });
    const results: TestResult[] = [];
    for (const test of this.tests) {
      const started = Date.now();
      this.log(`START ${test.name}`);
      try {
        await withTimeout(test.fn(), test.timeoutMs, test.name);
        results.push({ name: test.name, ok: true, durationMs: Date.now() - started });
        this.log(`PASS  ${test.name}`);
      } catch (err) {
        const error = err instanceof Error ? `${err.message}\n${err.stack ?? ""}` : String(err);
        results.push({ name: test.name, ok: false, error, durationMs: Date.now() - started });
        this.log(`FAIL  ${test.name}: ${error}`);
        if (test.settle) await this.settle(test);
      }
      fs.writeFileSync(path.join(this.outDir, "results.json"), JSON.stringify(results, null, 2));
    }
    return results;
  }

  private async settle(test: TestCase): Promise<void> {
    try {
      await withTimeout(test.settle!(), SETTLE_TIMEOUT_MS, `settling after ${test.name}`);
      this.log(`SETTLED after ${test.name}`);
    } catch (err) {
      this.log(`NOT SETTLED after ${test.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`"${name}" did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

export function assertEqual<T>(actual: T, expected: T, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

/** Polls `probe` until it returns a value other than undefined/false. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ""}`);
}
