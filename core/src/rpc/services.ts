import type { App } from "../app.js";
import type { Base } from "../boot.js";
import type { LazyService } from "../server/lazy-services.js";
import type { SystemCalls } from "./system-calls.js";

/**
 * The six services of proto/dline/v1, each loaded on its first call (server/lazy-services.ts).
 * Their modules are imported here only dynamically, so that the bundle evaluates them then and
 * not at start-up: SystemService with what the sidecar starts with, the others with the app.
 */
export function dlineServices(base: Base, app: () => Promise<App>, calls: SystemCalls): LazyService[] {
  const system: LazyService = {
    typeName: "dline.v1.SystemService",
    load: async () => {
      const { registerSystemService } = await import("./system-routes.js");
      return (router) => registerSystemService(router, base, calls);
    },
  };
  const withApp = (name: string): LazyService => ({
    typeName: `dline.v1.${name}`,
    load: async () => {
      const [{ appRoutes }, loaded] = await Promise.all([import("./routes.js"), app()]);
      const register = appRoutes[`dline.v1.${name}`];
      if (!register) throw new Error(`No routes for dline.v1.${name}.`);
      return (router) => register(router, loaded);
    },
  });
  return [
    system,
    ...["SettingsService", "TaskService", "HistoryService", "CheckpointService", "ImportService"].map(withApp),
  ];
}
