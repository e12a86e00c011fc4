import { createHash } from "node:crypto";
import { DlineError } from "../errors.js";

/** How ListTasks orders; the key is unique with the id as tiebreaker, so cursors are stable. */
export type HistorySort = "newest" | "oldest" | "most_expensive";

export interface HistoryListOptions {
  workspaceRoot?: string;
  /**
   * Every stored spelling of `workspaceRoot`'s folder (through a link, with a trailing slash):
   * filled in by TaskHistory.list, which can look at the file system.
   */
  workspaceRootSpellings?: readonly string[];
  query?: string;
  favoritesOnly?: boolean;
  pageSize?: number;
  pageToken?: string;
  sort?: HistorySort;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

export interface Cursor {
  /** Filter fingerprint: a token is only valid with the filters it was issued for. */
  f: string;
  /** Sort key of the last row of the previous page. */
  k: number;
  id: string;
}

function filterFingerprint(o: HistoryListOptions, sort: HistorySort): string {
  return createHash("sha256")
    .update(JSON.stringify([o.workspaceRoot ?? "", o.query ?? "", !!o.favoritesOnly, sort]))
    .digest("base64url")
    .slice(0, 12);
}

export function encodePageToken(o: HistoryListOptions, sort: HistorySort, key: number, id: string): string {
  const cursor: Cursor = { f: filterFingerprint(o, sort), k: key, id };
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodePageToken(token: string, o: HistoryListOptions, sort: HistorySort): Cursor {
  let cursor: Cursor;
  try {
    cursor = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Cursor;
  } catch {
    throw new DlineError("invalid_argument", "page_token is not a token this server issued.");
  }
  if (typeof cursor?.k !== "number" || typeof cursor.id !== "string" || typeof cursor.f !== "string") {
    throw new DlineError("invalid_argument", "page_token is not a token this server issued.");
  }
  if (cursor.f !== filterFingerprint(o, sort)) {
    throw new DlineError("invalid_argument", "page_token was issued for other filters or another sort.");
  }
  return cursor;
}

/**
 * Turns free text into an FTS5 query: every word becomes a quoted prefix term, all of them
 * required. Quoting keeps FTS5 syntax characters in user text from raising a syntax error.
 */
export function ftsQuery(text: string): string | undefined {
  // The unicode61 tokenizer splits on anything that is not a letter or digit: so do we, which
  // also drops FTS5 syntax characters from user text.
  const words = (text.match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 16);
  if (words.length === 0) return undefined;
  return words.map((w) => `"${w}"*`).join(" ");
}

export interface BuiltQuery {
  sql: string;
  params: unknown[];
  pageSize: number;
  sort: HistorySort;
  sortKeyColumn: "created_at" | "cost";
}

/** The workspace and favourites conditions of a listing (on `tasks t`), with their parameters. */
export function listFilters(o: HistoryListOptions): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (o.workspaceRoot) {
    const roots = o.workspaceRootSpellings?.length ? o.workspaceRootSpellings : [o.workspaceRoot];
    where.push(`t.workspace_root IN (${roots.map(() => "?").join(", ")})`);
    params.push(...roots);
  }
  if (o.favoritesOnly) where.push("t.favorite = 1");
  return { where, params };
}

/** Builds the list query: filters, keyset paging on (key, id), one extra row to detect a next page. */
export function buildListQuery(o: HistoryListOptions, columns: string): BuiltQuery {
  const sort = o.sort ?? "newest";
  const pageSize = Math.min(MAX_PAGE_SIZE, o.pageSize && o.pageSize > 0 ? o.pageSize : DEFAULT_PAGE_SIZE);
  const { where, params } = listFilters(o);
  const fts = o.query ? ftsQuery(o.query) : undefined;
  if (fts) {
    where.push("t.seq IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?)");
    params.push(fts);
  }
  const keyColumn = sort === "most_expensive" ? "cost" : "created_at";
  const descending = sort !== "oldest";
  if (o.pageToken) {
    const cursor = decodePageToken(o.pageToken, o, sort);
    where.push(`(t.${keyColumn}, t.id) ${descending ? "<" : ">"} (?, ?)`);
    params.push(cursor.k, cursor.id);
  }
  const direction = descending ? "DESC" : "ASC";
  const sql =
    `SELECT ${columns} FROM tasks t` +
    (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
    ` ORDER BY t.${keyColumn} ${direction}, t.id ${direction} LIMIT ?`;
  params.push(pageSize + 1);
  return { sql, params, pageSize, sort, sortKeyColumn: keyColumn };
}
