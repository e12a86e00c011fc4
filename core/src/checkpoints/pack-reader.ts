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
  /** The index's fan-out table: entry n counts the ids whose first byte is at most n. */
  fanout: Buffer;
  /**
   * The ids (and their offsets) sharing a first byte, read from the index at the first look-up
   * among them. A whole index read at once is 28 bytes an object: a baseline's pack of 40,000
   * objects put 1.1 MB outside the heap at a process's first read, where a later task looks up
   * a few dozen objects.
   */
  buckets: Map<number, Bucket>;
}

/** The ids sharing a first byte, sorted, and each one's 31-bit offset field. */
interface Bucket {
  ids: Buffer;
  offsets: Buffer;
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
 * git. Packs never change once named (the name is their checksum): what was read of their
 * indexes is kept.
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
  return withFile(idxFile, (fd) => {
    const head = readAt(fd, HEAD_BYTES, 0);
    if (!head || head.readUInt32BE(0) !== IDX_MAGIC || head.readUInt32BE(4) !== 2) return undefined;
    const count = head.readUInt32BE(8 + 255 * 4);
    const idxBytes = fs.fstatSync(fd).size;
    if (idxBytes < HEAD_BYTES + count * 28 + 40) return undefined;
    const packFile = path.join(dir, `${name.slice(0, -4)}.pack`);
    return { packFile, idxFile, count, idxBytes, fanout: head.subarray(8), buckets: new Map() };
  });
}

/** The object's offset in its pack, by binary search of the ids sharing its first byte. */
function findOffset(pack: PackIndex, key: Buffer): number | undefined {
  const first = key.readUInt8(0);
  const bucket = pack.buckets.get(first) ?? loadBucket(pack, first);
  if (!bucket) return undefined;
  const { ids, offsets } = bucket;
  let [lo, hi] = [0, ids.length / 20];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const cmp = key.compare(ids, mid * 20, mid * 20 + 20);
    if (cmp < 0) hi = mid;
    else if (cmp > 0) lo = mid + 1;
    else {
      const small = offsets.readUInt32BE(mid * 4);
      if (!(small & 0x80000000)) return small;
      // The large-offset table (packs over 2 GiB).
      const large = HEAD_BYTES + pack.count * 28 + (small & 0x7fffffff) * 8;
      if (large + 8 > pack.idxBytes - 40) return undefined;
      const value = withFile(pack.idxFile, (fd) => readAt(fd, 8, large)?.readBigUInt64BE(0));
      return value === undefined ? undefined : Number(value);
    }
  }
  return undefined;
}

/** Reads (and keeps) the ids with this first byte and their offsets; undefined when there are none. */
function loadBucket(pack: PackIndex, first: number): Bucket | undefined {
  const { fanout, count } = pack;
  const lo = first === 0 ? 0 : fanout.readUInt32BE((first - 1) * 4);
  const hi = fanout.readUInt32BE(first * 4);
  if (lo >= hi || hi > count) return undefined;
  const bucket = withFile(pack.idxFile, (fd) => {
    const ids = readAt(fd, (hi - lo) * 20, HEAD_BYTES + lo * 20);
    // The CRC table (4 bytes an object) lies between the ids and the offsets.
    const offsets = readAt(fd, (hi - lo) * 4, HEAD_BYTES + count * 24 + lo * 4);
    return ids && offsets ? { ids, offsets } : undefined;
  });
  if (bucket) pack.buckets.set(first, bucket);
  return bucket;
}

/** `use` on the file opened for reading; undefined when it cannot be opened or read. */
function withFile<T>(file: string, use: (fd: number) => T | undefined): T | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    return use(fd);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
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
      // Output room for exactly the object (and the check that nothing follows), not 16 KiB.
      const out = zlib.inflateSync(chunk.subarray(0, n), { chunkSize: Math.max(64, size + 1) });
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
