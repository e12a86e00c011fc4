import type Database from "better-sqlite3";
import {
  decodePageToken,
  ftsQuery,
  listFilters,
  type BuiltQuery,
  type HistoryListOptions,
  type HistorySort,
} from "./history-query.js";

/**
 * How a text search finds its page:
 * - "sort": every full-text match is fetched, filtered and sorted (fast when matches are few);
 * - "walk": the sort index is walked from the cursor and each row is tested against the set of
 *   matches (fast when matches are many: the page fills after a few rows);
 * - "auto": picks per query (see `HistorySearch`). All three answer the same rows in the same order.
 */
export type SearchPlan = "auto" | "sort" | "walk";

/**
 * How many matches the planner reads before it calls a search "many". Above it, sorting every
 * match costs more than walking the sort index; below it, the matches read are all of them.
 */
export const DEFAULT_MATCH_CAP = 5000;

type Row = Record<string, unknown>;
type StatementOf = (sql: string) => Database.Statement<unknown[]>;

interface Shape {
  fts: string;
  sort: HistorySort;
  key: "created_at" | "cost";
  dir: "ASC" | "DESC";
  /** Filter conditions and their parameters, without the text match. */
  where: string[];
  params: unknown[];
  /** The index that yields rows in the sort order under these filters; undefined when none does. */
  index: string | undefined;
  limit: number;
}

/**
 * Plans text searches of the task history so that a first page stays fast at a million tasks
 * whether the words match almost nothing or almost everything.
 *
 * SQLite alone sorts every match (seconds when most tasks match), and forcing the sort index
 * makes it materialize every match first. "auto" instead reads at most `matchCap + 1` matches
 * from the full-text index, newest rowid first (rowids follow insertion, which mostly follows
 * creation time), in one full-text pass:
 * - all matches fit under the cap: they are the whole answer; fetch those rows and sort them;
 * - more: walk the sort index from the cursor, taking rows among the matches read, and stop at
 *   the first row whose rowid lies outside the range read (its membership is unknown). A page
 *   that fills before such a row is exact; otherwise the "walk" plan answers (one more pass).
 * Keyset order and page tokens are those of `buildListQuery`: the cursor (key, id) is the same.
 */
export class HistorySearch {
  constructor(
    private readonly statement: StatementOf,
    private readonly columns: string,
    private readonly matchCap = DEFAULT_MATCH_CAP,
  ) {}

  /**
   * Up to `q.pageSize + 1` rows of the search `o` (validated into `q` by buildListQuery), or
   * undefined when `o` has no searchable words (a plain listing).
   */
  rows(o: HistoryListOptions, q: BuiltQuery, plan: SearchPlan = "auto"): Row[] | undefined {
    const shape = this.shape(o, q);
    if (shape === undefined) return undefined;
    const sorted = () => this.statement(q.sql).all(...q.params) as Row[];
    if (plan === "sort") return sorted();
    if (plan === "walk") return shape.index ? this.walkAll(shape, shape.index) : sorted();
    return this.auto(shape, sorted);
  }

  private auto(s: Shape, sorted: () => Row[]): Row[] {
    const cap = Math.max(this.matchCap, 4 * s.limit);
    // Newest-first pages start among the highest rowids, oldest-first among the lowest. Cost does
    // not follow rowids: read from the bottom, which is cheaper (FTS5 reverses a prefix term's list).
    const fromTop = s.sort === "newest";
    const read = this.statement(
      `SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ? ORDER BY rowid ${fromTop ? "DESC" : "ASC"} LIMIT ?`,
    )
      .pluck()
      .all(s.fts, cap + 1) as number[];
    if (read.length === 0) return [];
    const ids = JSON.stringify(read);
    if (read.length <= cap) {
      return this.statement(
        `SELECT ${this.columns} FROM tasks t WHERE t.seq IN (SELECT value FROM json_each(?))` +
          s.where.map((w) => ` AND ${w}`).join("") +
          ` ORDER BY t.${s.key} ${s.dir}, t.id ${s.dir} LIMIT ?`,
      ).all(ids, ...s.params, s.limit) as Row[];
    }
    if (!s.index) return sorted();
    // Rows past `bound` were all read: a row there is a match exactly when it is in `ids`.
    const bound = read[read.length - 1];
    const outside = fromTop ? "t.seq < ?" : "t.seq > ?";
    const rows = this.statement(
      `SELECT ${this.columns}, NOT (${outside}) AS dline_known FROM tasks t INDEXED BY ${s.index} WHERE ` +
        [...s.where, `(${outside} OR t.seq IN (SELECT value FROM json_each(?)))`].join(" AND ") +
        ` ORDER BY t.${s.key} ${s.dir}, t.id ${s.dir} LIMIT ?`,
    ).all(bound, ...s.params, bound, ids, s.limit) as Row[];
    if (rows.some((r) => r.dline_known !== 1)) return this.walkAll(s, s.index);
    for (const r of rows) delete r.dline_known;
    return rows;
  }

  /** The sort index walked in order, each row tested against every match (SQLite lists them once). */
  private walkAll(s: Shape, index: string): Row[] {
    return this.statement(
      `SELECT ${this.columns} FROM tasks t INDEXED BY ${index} WHERE ` +
        [...s.where, "t.seq IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?)"].join(" AND ") +
        ` ORDER BY t.${s.key} ${s.dir}, t.id ${s.dir} LIMIT ?`,
    ).all(...s.params, s.fts, s.limit) as Row[];
  }

  /**
   * The search's filters, sort and cursor as `buildListQuery` applies them; undefined for a plain
   * listing.
   */
  private shape(o: HistoryListOptions, q: BuiltQuery): Shape | undefined {
    const fts = o.query ? ftsQuery(o.query) : undefined;
    if (!fts) return undefined;
    const dir = q.sort === "oldest" ? "ASC" : "DESC";
    const { where, params } = listFilters(o);
    if (o.pageToken) {
      // buildListQuery already decoded and checked this token (it throws on a bad one).
      const cursor = decodePageToken(o.pageToken, o, q.sort);
      where.push(`(t.${q.sortKeyColumn}, t.id) ${dir === "DESC" ? "<" : ">"} (?, ?)`);
      params.push(cursor.k, cursor.id);
    }
    return {
      fts,
      sort: q.sort,
      key: q.sortKeyColumn,
      dir,
      where,
      params,
      index: sortIndex(o, q.sort),
      limit: q.pageSize + 1,
    };
  }
}

/** The index whose order is the sort under the filters (its leading columns fixed by them). */
function sortIndex(o: HistoryListOptions, sort: HistorySort): string | undefined {
  if (sort === "most_expensive") return o.workspaceRoot ? undefined : "tasks_by_cost";
  if (o.workspaceRoot) return "tasks_by_workspace";
  return o.favoritesOnly ? "tasks_by_favorite" : "tasks_by_created";
}
