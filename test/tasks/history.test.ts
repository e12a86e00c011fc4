import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { HistoryWatcher, type HistoryNotice } from "../../core/src/tasks/history-watcher.js";
import type { HistoryListOptions } from "../../core/src/tasks/history-query.js";
import type { SearchPlan } from "../../core/src/tasks/history-search.js";
import { TaskHistory } from "../../core/src/tasks/task-history.js";
import { taskEnv, type TaskEnv } from "./helpers.js";
import { nth } from "../helpers/items.js";

const open: TaskHistory[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close().catch(() => {});
});

function openHistory(env: TaskEnv): TaskHistory {
  fs.mkdirSync(env.layout.tasksDir, { recursive: true });
  const h = TaskHistory.open(env.sqlite, env.layout.taskHistoryDb, env.logger).history;
  open.push(h);
  return h;
}

function seed(h: TaskHistory) {
  h.putMany([
    {
      id: "t1",
      title: "Fix the login bug",
      taskText: "users cannot log in with SSO",
      workspaceRoot: "/ws/a",
      createdAt: 1000,
      cost: 0.5,
    },
    {
      id: "t2",
      title: "Write docs",
      taskText: "document the deploy pipeline",
      workspaceRoot: "/ws/b",
      createdAt: 2000,
      cost: 2.0,
      favorite: true,
    },
    {
      id: "t3",
      title: "Refactor parser",
      taskText: "split the tokenizer from the parser",
      workspaceRoot: "/ws/a",
      createdAt: 3000,
      cost: 1.0,
    },
    { id: "t4", title: "Deploy", taskText: "login page deploy", workspaceRoot: "/ws/a", createdAt: 3000, cost: 0.1 },
  ]);
}

describe("TaskHistory", () => {
  it("lists newest, oldest and most expensive first, with stable cursor paging", () => {
    const h = openHistory(taskEnv());
    seed(h);
    expect(h.list().tasks.map((t) => t.id)).toEqual(["t4", "t3", "t2", "t1"]);
    expect(h.list({ sort: "oldest" }).tasks.map((t) => t.id)).toEqual(["t1", "t2", "t3", "t4"]);
    expect(h.list({ sort: "most_expensive" }).tasks.map((t) => t.id)).toEqual(["t2", "t3", "t1", "t4"]);
    const seen: string[] = [];
    let token = "";
    do {
      const page = h.list({ pageSize: 1, pageToken: token, sort: "newest" });
      seen.push(...page.tasks.map((t) => t.id));
      token = page.nextPageToken;
    } while (token);
    expect(seen).toEqual(["t4", "t3", "t2", "t1"]);
  });

  it("filters by workspace, favourites and full-text search over title and task text", () => {
    const h = openHistory(taskEnv());
    seed(h);
    expect(h.list({ workspaceRoot: "/ws/a" }).tasks.map((t) => t.id)).toEqual(["t4", "t3", "t1"]);
    expect(h.list({ favoritesOnly: true }).tasks.map((t) => t.id)).toEqual(["t2"]);
    expect(h.list({ query: "login" }).tasks.map((t) => t.id)).toEqual(["t4", "t1"]);
    expect(h.list({ query: "tokeni" }).tasks.map((t) => t.id)).toEqual(["t3"]); // prefix match in task text
    expect(h.list({ query: 'login" (* NEAR' }).tasks.length).toBe(0);
    expect(h.list({ query: 'login" (*' }).tasks.map((t) => t.id)).toEqual(["t4", "t1"]); // FTS syntax is inert
    expect(h.list({ query: "login", workspaceRoot: "/ws/b" }).tasks).toEqual([]);
  });

  it("a workspace filter finds the folder's tasks however it was spelled: a trailing slash, through a link", () => {
    const env = taskEnv();
    const real = path.join(env.roots.base, "repo");
    const link = path.join(env.roots.base, "link");
    fs.mkdirSync(real);
    fs.symlinkSync(real, link);
    const h = openHistory(env);
    h.putMany([
      { id: "by-real", title: "a", taskText: "a", workspaceRoot: real, createdAt: 1000, cost: 0 },
      { id: "by-link", title: "b", taskText: "b", workspaceRoot: link, createdAt: 2000, cost: 0 },
      { id: "other", title: "c", taskText: "c", workspaceRoot: "/ws/other", createdAt: 3000, cost: 0 },
    ]);
    const ids = (workspaceRoot: string) => h.list({ workspaceRoot }).tasks.map((t) => t.id);
    expect(ids(real)).toEqual(["by-link", "by-real"]);
    expect(ids(`${real}/`)).toEqual(["by-link", "by-real"]);
    expect(ids(link)).toEqual(["by-link", "by-real"]);
    expect(ids("/ws/other/")).toEqual(["other"]); // a folder that is not here: by its path alone
    expect(ids(path.join(env.roots.base, "elsewhere"))).toEqual([]);
  });

  it("refuses a page token issued for other filters, or garbage, with invalid_argument", () => {
    const h = openHistory(taskEnv());
    seed(h);
    const token = h.list({ pageSize: 1 }).nextPageToken;
    expect(token).not.toBe("");
    const err = (() => {
      try {
        h.list({ pageSize: 1, pageToken: token, sort: "oldest" });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(DlineError);
    expect((err as DlineError).code).toBe("invalid_argument");
    expect(() => h.list({ pageToken: "%%%not-a-token" })).toThrow(DlineError);
  });

  it("sets favourites and reports a missing task", () => {
    const h = openHistory(taskEnv());
    seed(h);
    expect(h.setFavorite("t1", true)).toBe(true);
    expect(h.get("t1")?.favorite).toBe(true);
    expect(h.setFavorite("nope", true)).toBe(false);
  });

  it("queues metadata writes and flush() reports every failed one", async () => {
    const h = openHistory(taskEnv());
    seed(h);
    const ok = h.update("t1", { title: "renamed", tokensIn: 10 });
    const bad1 = h.update("missing-1", { title: "x" });
    const bad2 = h.update("missing-2", { title: "y" });
    bad1.catch(() => {});
    bad2.catch(() => {});
    // Not applied yet: queued behind the caller.
    expect(h.get("t1")?.title).toBe("Fix the login bug");
    const flushed = await h.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    await ok;
    expect(h.get("t1")).toMatchObject({ title: "renamed", tokensIn: 10 });
    expect(flushed).toBeInstanceOf(AggregateError);
    expect((flushed as AggregateError).errors).toHaveLength(2);
    await expect(h.flush()).resolves.toBeUndefined(); // reported once
  });

  it("lists a row with wrong types as damaged and keeps listing the others", () => {
    const env = taskEnv();
    const h = openHistory(env);
    seed(h);
    const raw = new Database(env.layout.taskHistoryDb);
    raw.prepare("UPDATE tasks SET tokens_in = 'lots', status = 'exploded' WHERE id = 't3'").run();
    raw.close();
    const tasks = h.list().tasks;
    expect(tasks.map((t) => t.id)).toEqual(["t4", "t3", "t2", "t1"]);
    const t3 = tasks.find((t) => t.id === "t3")!;
    expect(t3.status).toBe("damaged");
    expect(t3.damagedReason).toMatch(/tokens_in/);
    expect(t3.damagedReason).toMatch(/status/);
    expect(tasks.filter((t) => t.status === "damaged")).toHaveLength(1);
  });

  it("refuses a database from a newer schema with failed_precondition", () => {
    const env = taskEnv();
    fs.mkdirSync(env.layout.tasksDir, { recursive: true });
    const raw = new Database(env.layout.taskHistoryDb);
    raw.pragma("user_version = 99");
    raw.close();
    expect(() => TaskHistory.open(env.sqlite, env.layout.taskHistoryDb, env.logger)).toThrow(/newer/);
  });

  it("notifies watchers of changes made through another connection (debounced, with ids)", async () => {
    const env = taskEnv();
    const mine = openHistory(env);
    const other = openHistory(env); // a second connection, as another sidecar would hold
    const watcher = new HistoryWatcher(mine, env.logger, 20, 200);
    watcher.start();
    const notices: HistoryNotice[] = [];
    watcher.subscribe((n) => notices.push(n));
    try {
      other.put({ id: "x1", title: "from elsewhere" });
      other.put({ id: "x2", title: "also" });
      other.remove(["x2"]);
      await expect.poll(() => notices.flatMap((n) => n.changedTaskIds), { timeout: 5000 }).toContain("x1");
      await expect.poll(() => notices.flatMap((n) => n.removedTaskIds), { timeout: 5000 }).toContain("x2");
      expect(notices.every((n) => !n.reload)).toBe(true);
      expect(notices.flatMap((n) => n.changedTaskIds)).not.toContain("x2");
    } finally {
      watcher.stop();
    }
  });
});

describe("TaskHistory text search plans", () => {
  // A few thousand rows: created_at with many ties, insertion mostly in creation order but with
  // shuffled stretches (rowids then do not follow the sort), costs with ties, four workspaces.
  function generate(n: number) {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const rows = Array.from({ length: n }, (_, i) => {
      const title = ["alpha", i % 3 === 0 ? "beta" : "", i % 40 === 1 ? "gamma" : "", i % 97 === 5 ? "gamut" : ""]
        .filter(Boolean)
        .join(" ");
      return {
        id: `r-${(i * 7919) % n}`,
        title: `${title} task`,
        taskText: i % 11 === 0 ? "omega notes" : "notes",
        createdAt: 1_000_000 + Math.floor(i / 3) * 1000, // three rows per instant
        cost: Math.floor(rand() * 40) / 8,
        workspaceRoot: `/ws/${Math.floor(rand() * 4)}`,
        favorite: rand() < 0.2,
      };
    });
    // Shuffle stretches of the insertion order (as an import of old tasks would).
    for (let start = 0; start < n; start += 400) {
      if ((start / 400) % 2 === 0) continue;
      const block = rows.slice(start, start + 400);
      for (let i = block.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [block[i], block[j]] = [nth(block, j, "row"), nth(block, i, "row")];
      }
      rows.splice(start, block.length, ...block);
    }
    return rows;
  }
  type Gen = ReturnType<typeof generate>[number];

  /** Brute force: the same filters, prefix matching of every word, the sort with id as tiebreaker. */
  function expected(rows: Gen[], o: HistoryListOptions): string[] {
    const terms = (o.query ?? "")
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
    const key = (r: Gen) => (o.sort === "most_expensive" ? r.cost : r.createdAt);
    const sign = o.sort === "oldest" ? 1 : -1;
    return rows
      .filter((r) => !o.workspaceRoot || r.workspaceRoot === o.workspaceRoot)
      .filter((r) => !o.favoritesOnly || r.favorite)
      .filter((r) => {
        const tokens = `${r.title} ${r.taskText}`.toLowerCase().split(/[^a-z0-9]+/);
        return terms.every((t) => tokens.some((w) => w.startsWith(t)));
      })
      .sort((a, b) => sign * (key(a) - key(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
      .map((r) => r.id);
  }

  function pages(h: TaskHistory, o: HistoryListOptions, plan: SearchPlan): { ids: string[]; tokens: string[] } {
    const ids: string[] = [];
    const tokens: string[] = [];
    let token = "";
    do {
      const page = h.list({ ...o, pageToken: token }, plan);
      ids.push(...page.tasks.map((t) => t.id));
      tokens.push(page.nextPageToken);
      token = page.nextPageToken;
    } while (token && tokens.length < 1000);
    return { ids, tokens };
  }

  it("answers the same pages and page tokens with every plan, in brute-force order", () => {
    const env = taskEnv();
    const rows = generate(2400);
    const h = openHistory(env);
    for (let i = 0; i < rows.length; i += 500) h.putMany(rows.slice(i, i + 500));
    // A second connection whose planner calls 60 matches "many", so that its walk is exercised too.
    const small = TaskHistory.open(env.sqlite, env.layout.taskHistoryDb, env.logger, { searchMatchCap: 60 }).history;
    open.push(small);
    let nonEmpty = 0;
    for (const query of ["alpha", "beta task", "gam", "gamma", "omega bet", "zeta"]) {
      for (const sort of ["newest", "oldest", "most_expensive"] as const) {
        for (const filter of [
          {},
          { workspaceRoot: "/ws/2" },
          { favoritesOnly: true },
          { workspaceRoot: "/ws/1", favoritesOnly: true },
        ]) {
          const o: HistoryListOptions = { query, sort, pageSize: 15, ...filter };
          const want = expected(rows, o);
          if (want.length > 0) nonEmpty++;
          const reference = pages(h, o, "sort");
          expect(reference.ids, JSON.stringify(o)).toEqual(want);
          for (const [history, plan] of [
            [h, "auto"],
            [h, "walk"],
            [small, "auto"],
          ] as const) {
            const got = pages(history, o, plan);
            expect(got.ids, `${plan} ${JSON.stringify(o)}`).toEqual(want);
            expect(got.tokens, `${plan} ${JSON.stringify(o)}`).toEqual(reference.tokens);
          }
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(50);
  });

  it("continues a page token issued by one plan with another", () => {
    const env = taskEnv();
    const rows = generate(600);
    const h = openHistory(env);
    h.putMany(rows);
    const o: HistoryListOptions = { query: "alpha", pageSize: 25, sort: "newest" };
    const first = h.list(o, "walk");
    const want = expected(rows, o);
    expect(first.tasks.map((t) => t.id)).toEqual(want.slice(0, 25));
    for (const plan of ["auto", "sort", "walk"] as const) {
      expect(h.list({ ...o, pageToken: first.nextPageToken }, plan).tasks.map((t) => t.id)).toEqual(want.slice(25, 50));
    }
    expect(() => h.list({ ...o, sort: "oldest", pageToken: first.nextPageToken }, "auto")).toThrow(DlineError);
  });
});
