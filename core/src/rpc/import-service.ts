import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  DiscoverClineResponseSchema,
  ImportClineResponseSchema,
  ImportItemKind,
  ImportItemSchema,
  ImportResultSchema,
  type ImportItem,
  type ImportService,
} from "../gen/dline/v1/import_pb.js";
import type { ClineImporter, DiscoveredItem, ImportItemResult } from "../import/index.js";

const kindOf = { legacy_task: ImportItemKind.LEGACY_TASK, session: ImportItemKind.SESSION } as const;

function itemToProto(item: DiscoveredItem): ImportItem {
  return create(ImportItemSchema, {
    sourceKey: item.sourceKey,
    kind: kindOf[item.kind],
    title: item.title,
    workspaceRoot: item.workspaceRoot,
    skippedReason: item.skip?.reason ?? "",
    skippedCode: item.skip?.code ?? "",
    createdAt: BigInt(Math.round(item.startedAt)),
    updatedAt: BigInt(Math.round(item.updatedAt)),
    importedTaskId: item.importedTaskId,
    root: item.root,
    path: item.path,
    models: item.models,
    messageCount: BigInt(item.messageCount),
    tokensIn: BigInt(Math.round(item.usage.tokensIn)),
    tokensOut: BigInt(Math.round(item.usage.tokensOut)),
    cacheReads: BigInt(Math.round(item.usage.cacheReads)),
    cacheWrites: BigInt(Math.round(item.usage.cacheWrites)),
    cost: item.usage.cost,
    workspaceNote: item.workspaceNote,
    taskId: item.taskId,
  });
}

function resultToProto(r: ImportItemResult) {
  return create(ImportResultSchema, {
    sourceKey: r.sourceKey,
    taskId: r.taskId,
    outcome: r.outcome,
    notCarriedOver: r.notCarriedOver,
    error: r.error,
    kind: r.item ? kindOf[r.item.kind] : ImportItemKind.UNSPECIFIED,
    title: r.item?.title ?? "",
    workspaceRoot: r.item?.workspaceRoot ?? "",
    messageCount: BigInt(r.item?.messageCount ?? 0),
    detail: r.detail ?? "",
    errorCode: r.errorCode ?? "",
  });
}

/** ImportService: maps proto <-> the Cline importer (import/). */
export function importService(importer: ClineImporter): Partial<ServiceImpl<typeof ImportService>> {
  return {
    async discoverCline(_req, ctx) {
      const { items, rootsSearched } = await importer.discover(ctx.signal);
      return create(DiscoverClineResponseSchema, { items: items.map(itemToProto), rootsSearched });
    },
    async importCline(req, ctx) {
      const results = await importer.import(
        { sourceKeys: req.sourceKeys, all: req.all, dryRun: req.dryRun },
        ctx.signal,
      );
      return create(ImportClineResponseSchema, { results: results.map(resultToProto), dryRun: req.dryRun });
    },
  };
}
