import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import * as zlib from "node:zlib";
import type { ObjectType } from "./git-objects.js";
import { PRIVATE_DIR_MODE } from "../storage/index.js";

const deflate = promisify(zlib.deflate);

/**
 * Up to this size data is compressed and written synchronously: a turn's pack holds about ten
 * small objects, and each asynchronous step costs a thread-pool round trip (0.3-1 ms on these
 * machines) where the synchronous call takes microseconds. Larger data does not hold up the
 * event loop.
 */
const SMALL = 256 * 1024;

/**
 * zlib settings for those small objects: a 4 KiB window (git reads streams of any window size)
 * and the default memory level. A lower one (2, kept from 2026-11-30 to 2026-12-06) shrinks the
 * buffer of symbols zlib codes per block to 256: a tree of a folder of 135 entries (5 KB) then
 * took 240 us instead of 40, one of 700 entries 1.4 ms instead of 0.18 (node 24, this machine),
 * and a turn's save writes several such trees.
 */
const SMALL_DEFLATE: zlib.ZlibOptions = { level: 1, windowBits: 12 };

/**
 * zlib's output buffer for `size` bytes of input: room for all of it at once (a stream of such
 * small data never comes out much larger). The default is 16 KiB a call, each a buffer outside
 * V8's heap that lives until a collection; with the reader's the same (pack-reader.ts), a later
 * task's thirty-odd objects of a few hundred bytes left 0.5 MB of them, which brought its sidecar
 * to a full collection it does not otherwise reach (6 of 8 runs at 27,000 files; none since).
 */
function zlibChunkFor(size: number): number {
  return Math.max(64, size + (size >> 10) + 64);
}

const TYPE_CODES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };

export interface NewObject {
  type: ObjectType;
  body: Buffer;
}

/**
 * Writes objects as one pack (`objects/pack/pack-<checksum>.pack` and its version-2 `.idx`, no
 * deltas): two new files for a turn's ten-odd objects, where loose objects need one each (file
 * creation is most of a turn's cost on a busy disk). Both are written under temporary names;
 * the pack gets its name first and the index last, since git only reads a pack once its index
 * exists. Unreferenced objects in such packs go at the next `gc` (see CheckpointManager's
 * garbage collection after deletions).
 */
export async function writePack(objectsDir: string, objects: ReadonlyMap<string, NewObject>): Promise<string> {
  const entries = [...objects]
    .map(([id, o]) => ({ id, ...o }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const header = Buffer.alloc(12);
  header.write("PACK", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const parts: Buffer[] = [header];
  let offset = header.length;
  const records: { id: string; offset: number; crc: number }[] = [];
  for (const [i, e] of entries.entries()) {
    // A baseline's thousands of trees: other work of the process runs between slices.
    if (i > 0 && i % 2000 === 0) await new Promise((resolve) => setImmediate(resolve));
    const compressed =
      e.body.length <= SMALL
        ? zlib.deflateSync(e.body, { ...SMALL_DEFLATE, chunkSize: zlibChunkFor(e.body.length) })
        : await deflate(e.body, { level: 1 });
    const packed = Buffer.concat([objectHeader(TYPE_CODES[e.type], e.body.length), compressed]);
    records.push({ id: e.id, offset, crc: zlib.crc32(packed) });
    parts.push(packed);
    offset += packed.length;
  }
  const packSum = hashOf(parts);
  parts.push(packSum);
  const pack = Buffer.concat(parts);
  const index = packIndex(records, packSum);

  const packDir = path.join(objectsDir, "pack");
  const name = `pack-${packSum.toString("hex")}`;
  const tmp = path.join(packDir, `tmp_pack_${process.pid}_${randomBytes(4).toString("hex")}`);
  try {
    await writeNew(`${tmp}.pack`, pack, packDir);
    await writeNew(`${tmp}.idx`, index, packDir);
    fs.renameSync(`${tmp}.pack`, path.join(packDir, `${name}.pack`));
    fs.renameSync(`${tmp}.idx`, path.join(packDir, `${name}.idx`));
  } catch (err) {
    fs.rmSync(`${tmp}.pack`, { force: true });
    fs.rmSync(`${tmp}.idx`, { force: true });
    throw err;
  }
  return name;
}

/** A packed object's type-and-size header: 3 type bits and 4 size bits, then 7 size bits per byte. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** A version-2 pack index: fan-out table, sorted ids, CRC-32s, offsets, the pack's checksum, its own. */
function packIndex(records: { id: string; offset: number; crc: number }[], packSum: Buffer): Buffer {
  const n = records.length;
  const head = Buffer.alloc(8 + 256 * 4);
  head.writeUInt32BE(0xff744f63, 0);
  head.writeUInt32BE(2, 4);
  const ids = Buffer.alloc(n * 20);
  const crcs = Buffer.alloc(n * 4);
  const offsets = Buffer.alloc(n * 4);
  // The fan-out table counts ids by first byte, in place in the header, then sums up.
  const fanout = (firstByte: number) => 8 + firstByte * 4;
  records.forEach((r, i) => {
    ids.write(r.id, i * 20, "hex");
    crcs.writeUInt32BE(r.crc >>> 0, i * 4);
    // 2 GiB and beyond would need the large-offset table; objects are limited far below that.
    if (r.offset >= 0x80000000) throw new Error("pack too large for its index");
    offsets.writeUInt32BE(r.offset, i * 4);
    const slot = fanout(parseInt(r.id.slice(0, 2), 16));
    head.writeUInt32BE(head.readUInt32BE(slot) + 1, slot);
  });
  for (let byte = 1; byte < 256; byte++) {
    head.writeUInt32BE(head.readUInt32BE(fanout(byte - 1)) + head.readUInt32BE(fanout(byte)), fanout(byte));
  }
  const body = [head, ids, crcs, offsets, packSum];
  return Buffer.concat([...body, hashOf(body)]);
}

function hashOf(parts: Buffer[]): Buffer {
  const hash = createHash("sha1");
  for (const p of parts) hash.update(p);
  return hash.digest();
}

async function writeNew(file: string, data: Buffer, dir: string): Promise<void> {
  const write = async () => {
    if (data.length <= SMALL) fs.writeFileSync(file, data, { mode: 0o400, flag: "wx" });
    else await fs.promises.writeFile(file, data, { mode: 0o400, flag: "wx" });
  };
  try {
    await write();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await write();
  }
}
