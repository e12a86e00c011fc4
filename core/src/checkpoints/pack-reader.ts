import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { objectId, type ObjectType } from "./git-objects.js";

/** Pack type codes (git's object_type): the three base kinds and the two delta kinds. */
const TYPES: Record<number, ObjectType | undefined> = { 1: "commit", 2: "tree", 3: "blob" };
const OFS_DELTA = 6;
const REF_DELTA = 7;
const IDX_MAGIC = 0xff744f63;
/** An index's magic, version and fan-out table (256 counts); its sorted ids follow. */
const HEAD_BYTES = 8 + 256 * 4;
/** Git's own limit on delta chains is 4095 (pack.depth); anything longer is damage. */
const MAX_CHAIN = 5000;
/** Objects read this way are trees and commits; a larger size is damage (or a file, which callers never ask for). */
const MAX_OBJECT_BYTES = 64 * 1024 * 1024;

interface PackIndex {
  /** The pack file (`pack-<sum>.pack`) and its version-2 index (`.idx`). */
  packFile: string;
  idxFile: string;
  count: number;
  /** The index's size, which bounds its large-offset table. */
  idxBytes: number;
  /**
   * The index's fan-out table: entry n counts the ids whose first byte is at most n. Only this
   * is kept; a look-up reads the few ids its first byte allows (see findOffset). A whole index
   * in memory is 28 bytes an object: a baseline's pack of 40,000 objects held 1.1 MB outside
   * the heap from a process's first read, enough to bring a short CLI task a full collection.
   */
  fanout: Buffer;
}

/** A packed object as stored: its kind (a base kind or a delta) and where its data starts. */
interface Entry {
  type: number;
  size: number;
  dataOffset: number;
  /** OFS_DELTA: the base's offset in the same pack; REF_DELTA: the base's id. */
  baseOffset?: number;
  baseId?: string;
}

/**
 * Reads objects from a repository's packs (`objects/pack/*.idx` version 2 and their `.pack`
 * files, deltas included), without a git process: the trees and commits that `git repack` or
 * our own pack writer put there, which each save would otherwise ask of a `git` process. Every
 * object returned is checked against its id (hashed again); anything unexpected (an index of
 * another version, a pack removed meanwhile, damaged data) answers undefined and the caller asks
 * git. Packs never change once named (the name is their checksum): their fan-out tables are kept.
 */
export class PackReader {
  /** The packs as last listed, by index file name. */
  private packs = new Map<string, PackIndex>();
  private listed = false;

  constructor(private readonly objectsDir: string) {}

  read(id: string): { type: ObjectType; body: Buffer } | undefined {
    if (!/^[0-9a-f]{40}$/.test(id)) return undefined;
    const key = Buffer.from(id, "hex");
    if (!this.listed) this.list();
    const found = this.readListed(id, key);
    if (found) return found;
    // A miss, or a pack gone since the listing (a repack replaced it): the packs are listed again once.
    this.list();
    return this.readListed(id, key);
  }

  private readListed(id: string, key: Buffer): { type: ObjectType; body: Buffer } | undefined {
    for (const pack of this.packs.values()) {
      const offset = findOffset(pack, key);
      if (offset === undefined) continue;
      const object = this.objectAt(pack, offset, 0);
      return object && objectId(object.type, object.body) === id ? object : undefined;
    }
    return undefined;
  }

  private list(): void {
    const dir = path.join(this.objectsDir, "pack");
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((n) => n.endsWith(".idx"));
    } catch {
      names = [];
    }
    const packs = new Map<string, PackIndex>();
    for (const name of names) {
      const pack = this.packs.get(name) ?? loadIndex(dir, name);
      if (pack) packs.set(name, pack);
    }
    this.packs = packs;
    this.listed = true;
  }

  /** The object at `offset` with its deltas applied; undefined when it cannot be read. */
  private objectAt(pack: PackIndex, offset: number, depth: number): { type: ObjectType; body: Buffer } | undefined {
    if (depth > MAX_CHAIN) return undefined;
    let fd: number;
    try {
      fd = fs.openSync(pack.packFile, "r");
    } catch {
      return undefined;
    }
    try {
      const entry = readEntry(fd, offset);
      if (!entry || entry.size > MAX_OBJECT_BYTES) return undefined;
      const data = inflateAt(fd, entry.dataOffset, entry.size);
      if (!data) return undefined;
      const type = TYPES[entry.type];
      if (type) return { type, body: data };
      const base =
        entry.type === OFS_DELTA && entry.baseOffset !== undefined
          ? this.objectAt(pack, entry.baseOffset, depth + 1)
          : entry.type === REF_DELTA && entry.baseId
            ? this.read(entry.baseId)
            : undefined;
      if (!base) return undefined;
      const body = applyDelta(base.body, data);
      return body && { type: base.type, body };
    } catch {
      return undefined;
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** A version-2 pack index (git's default since 1.5.2); other versions are left to git. */
function loadIndex(dir: string, name: string): PackIndex | undefined {
  const idxFile = path.join(dir, name);
  try {
    const fd = fs.openSync(idxFile, "r");
    try {
      const head = Buffer.alloc(HEAD_BYTES);
      if (fs.readSync(fd, head, 0, HEAD_BYTES, 0) < HEAD_BYTES) return undefined;
      if (head.readUInt32BE(0) !== IDX_MAGIC || head.readUInt32BE(4) !== 2) return undefined;
      const count = head.readUInt32BE(8 + 255 * 4);
      const idxBytes = fs.fstatSync(fd).size;
      if (idxBytes < HEAD_BYTES + count * 28 + 40) return undefined;
      const packFile = path.join(dir, `${name.slice(0, -4)}.pack`);
      return { packFile, idxFile, count, idxBytes, fanout: head.subarray(8) };
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * The object's offset in its pack: the ids sharing its first byte (the fan-out says which) are
 * read from the index and searched, then its offset. Nothing is read when none shares it.
 */
function findOffset(pack: PackIndex, key: Buffer): number | undefined {
  const { fanout, count } = pack;
  const first = key.readUInt8(0);
  const lo = first === 0 ? 0 : fanout.readUInt32BE((first - 1) * 4);
  const hi = fanout.readUInt32BE(first * 4);
  if (lo >= hi || hi > count) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(pack.idxFile, "r");
  } catch {
    return undefined;
  }
  try {
    const ids = readAt(fd, (hi - lo) * 20, HEAD_BYTES + lo * 20);
    if (!ids) return undefined;
    let [from, to] = [0, hi - lo];
    while (from < to) {
      const mid = (from + to) >>> 1;
      const cmp = key.compare(ids, mid * 20, mid * 20 + 20);
      if (cmp < 0) to = mid;
      else if (cmp > 0) from = mid + 1;
      else return offsetOf(fd, pack, lo + mid);
    }
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** The pack offset of the index's `n`th object: 31 bits, or an entry of the large-offset table (packs over 2 GiB). */
function offsetOf(fd: number, pack: PackIndex, n: number): number | undefined {
  const offsets = HEAD_BYTES + pack.count * 24;
  const small = readAt(fd, 4, offsets + n * 4)?.readUInt32BE(0);
  if (small === undefined || !(small & 0x80000000)) return small;
  const large = offsets + pack.count * 4 + (small & 0x7fffffff) * 8;
  if (large + 8 > pack.idxBytes - 40) return undefined;
  const value = readAt(fd, 8, large)?.readBigUInt64BE(0);
  return value === undefined ? undefined : Number(value);
}

/** Exactly `length` bytes at `position`, or undefined when the file is shorter. */
function readAt(fd: number, length: number, position: number): Buffer | undefined {
  const buf = Buffer.alloc(length);
  return fs.readSync(fd, buf, 0, length, position) === length ? buf : undefined;
}

/** An entry's header: type and size (4 bits, then 7 per byte), and a delta's base. */
function readEntry(fd: number, offset: number): Entry | undefined {
  const head = Buffer.alloc(32);
  const n = fs.readSync(fd, head, 0, head.length, offset);
  let pos = 0;
  let byte = head.readUInt8(pos++);
  const type = (byte >> 4) & 7;
  let size = byte & 0x0f;
  let shift = 4;
  while (byte & 0x80) {
    if (pos >= n) return undefined;
    byte = head.readUInt8(pos++);
    size += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  }
  if (type === OFS_DELTA) {
    // Git's offset encoding: 7 bits per byte, each continuation adding one before the shift.
    if (pos >= n) return undefined;
    byte = head.readUInt8(pos++);
    let back = byte & 0x7f;
    while (byte & 0x80) {
      if (pos >= n) return undefined;
      byte = head.readUInt8(pos++);
      back = (back + 1) * 128 + (byte & 0x7f);
    }
    if (back <= 0 || back > offset) return undefined;
    return { type, size, dataOffset: offset + pos, baseOffset: offset - back };
  }
  if (type === REF_DELTA) {
    if (pos + 20 > n) return undefined;
    return { type, size, dataOffset: offset + pos + 20, baseId: head.toString("hex", pos, pos + 20) };
  }
  return TYPES[type] ? { type, size, dataOffset: offset + pos } : undefined;
}

/** The zlib stream at `offset`, inflated to exactly `size` bytes (more input is read if the first guess was short). */
function inflateAt(fd: number, offset: number, size: number): Buffer | undefined {
  let want = size + 64;
  for (;;) {
    const chunk = Buffer.alloc(want);
    const n = fs.readSync(fd, chunk, 0, want, offset);
    try {
      const out = zlib.inflateSync(chunk.subarray(0, n));
      return out.length === size ? out : undefined;
    } catch (err) {
      // Short of input: read more, unless the pack ended already.
      if ((err as NodeJS.ErrnoException).code !== "Z_BUF_ERROR" || n < want) return undefined;
      want *= 2;
    }
  }
}

/** Git's delta format: source and result sizes, then copies from the base and inserted bytes. */
function applyDelta(base: Buffer, delta: Buffer): Buffer | undefined {
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      if (pos >= delta.length) return -1;
      byte = delta.readUInt8(pos++);
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  if (varint() !== base.length) return undefined;
  const size = varint();
  if (size < 0 || size > MAX_OBJECT_BYTES) return undefined;
  const out = Buffer.alloc(size);
  let written = 0;
  while (pos < delta.length) {
    const op = delta.readUInt8(pos++);
    if (op & 0x80) {
      let from = 0;
      let length = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) from += delta.readUInt8(pos++) * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (1 << (4 + i))) length += delta.readUInt8(pos++) << (8 * i);
      if (length === 0) length = 0x10000;
      if (pos > delta.length || from + length > base.length || written + length > size) return undefined;
      base.copy(out, written, from, from + length);
      written += length;
    } else if (op > 0) {
      if (pos + op > delta.length || written + op > size) return undefined;
      delta.copy(out, written, pos, pos + op);
      written += op;
      pos += op;
    } else {
      return undefined;
    }
  }
  return written === size ? out : undefined;
}
