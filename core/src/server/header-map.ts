/**
 * The Fetch standard's `Headers`, for the server's plain unary calls. Node's global `Headers`
 * is undici's: its first use loads all of undici (fetch, WebSocket, WebIDL), 45-65 ms on these
 * machines, which an editor's first call after the handshake would wait for. Handlers and
 * interceptors see the same interface and behaviour: names are case-insensitive and must be
 * HTTP tokens, values are trimmed and may not hold NUL, CR or LF, repeated values join with
 * ", " except Set-Cookie's, and iteration is sorted by name.
 */
export class HeaderMap implements Headers {
  private readonly map = new Map<string, string[]>();

  constructor(init?: Iterable<readonly [string, string]> | Record<string, string>) {
    if (init === undefined) return;
    const pairs = Symbol.iterator in init ? init : Object.entries(init);
    for (const [name, value] of pairs) this.append(name, value);
  }

  /**
   * From node:http's `rawHeaders`: name, value, name, value... Not checked again: node's parser
   * has refused any name that is not a token and any value with NUL, CR or LF, and trimmed them.
   */
  static fromRaw(raw: readonly string[]): HeaderMap {
    const headers = new HeaderMap();
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i]!.toLowerCase();
      const value = raw[i + 1]!;
      const list = headers.map.get(key);
      if (list) list.push(value);
      else headers.map.set(key, [value]);
    }
    return headers;
  }

  append(name: string, value: string): void {
    const key = checkedName(name);
    const list = this.map.get(key);
    if (list) list.push(checkedValue(value));
    else this.map.set(key, [checkedValue(value)]);
  }

  set(name: string, value: string): void {
    this.map.set(checkedName(name), [checkedValue(value)]);
  }

  delete(name: string): void {
    this.map.delete(checkedName(name));
  }

  get(name: string): string | null {
    return this.map.get(checkedName(name))?.join(", ") ?? null;
  }

  has(name: string): boolean {
    return this.map.has(checkedName(name));
  }

  getSetCookie(): string[] {
    return [...(this.map.get("set-cookie") ?? [])];
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    // Without the generator: every answer's headers go through here.
    const keys = this.map.size > 1 ? [...this.map.keys()].sort() : this.map.keys();
    for (const key of keys) {
      const values = this.map.get(key)!;
      if (key === "set-cookie") for (const value of values) callback.call(thisArg, value, key, this);
      else callback.call(thisArg, values.length === 1 ? values[0]! : values.join(", "), key, this);
    }
  }

  *entries(): IterableIterator<[string, string]> {
    for (const key of [...this.map.keys()].sort()) {
      const values = this.map.get(key)!;
      if (key === "set-cookie") for (const value of values) yield [key, value];
      else yield [key, values.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_IN_VALUE = /[\0\r\n]/;

function checkedName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Invalid header name: "${text.slice(0, 100)}"`);
  return text.toLowerCase();
}

function checkedValue(value: string): string {
  const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError("Invalid header value: it holds NUL, CR or LF.");
  return text;
}
