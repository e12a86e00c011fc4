import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { objectId, type ObjectType } from "./git-objects.js";
import { PackReader } from "./pack-reader.js";

/**
 * Reads one loose object (`objects/ab/cdef...`, zlib-compressed) of a repository, such as the
 * trees and commits git's write-tree, commit-tree and fast-import leave loose. Packed, missing
 * or damaged objects answer undefined (callers then ask git). Synchronous: trees and commits
 * are small.
 */
export function readLooseObject(objectsDir: string, id: string): { type: string; body: Buffer } | undefined {
  let data: Buffer;
  try {
    data = zlib.inflateSync(fs.readFileSync(path.join(objectsDir, id.slice(0, 2), id.slice(2))));
  } catch {
    return undefined;
  }
  const nul = data.indexOf(0);
  if (nul < 0) return undefined;
  const [type, size] = data.toString("latin1", 0, nul).split(" ");
  const body = data.subarray(nul + 1);
  if (type === undefined || Number(size) !== body.length || objectId(type as ObjectType, body) !== id) return undefined;
  return { type, body };
}

/**
 * A repository's objects as this process reads them without git: loose first (what git's
 * write-tree and fast-import leave), then packed (pack-reader.ts). Undefined for anything
 * neither way reads (the caller asks git).
 */
export class ObjectReader {
  private readonly packs: PackReader;

  constructor(readonly objectsDir: string) {
    this.packs = new PackReader(objectsDir);
  }

  read(id: string): { type: string; body: Buffer } | undefined {
    return readLooseObject(this.objectsDir, id) ?? this.packs.read(id);
  }
}
