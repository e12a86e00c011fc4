import type { ConnectRouter } from "@connectrpc/connect";

/**
 * A service whose handlers are built on its first call: `load` brings in its modules and returns
 * the function that registers it with a router.
 */
export interface LazyService {
  /** The protobuf service's full name, e.g. "dline.v1.SystemService": its calls' path prefix. */
  typeName: string;
  load: () => Promise<(router: ConnectRouter) => void>;
}

/**
 * Loads each service once, on its first call or when preloaded; concurrent first calls share one
 * load. A failed load is not remembered: the next call tries again.
 */
export class LazyServices {
  private readonly byName: Map<string, LazyService>;
  private readonly loads = new Map<string, Promise<void>>();

  constructor(
    services: LazyService[],
    /** Registers a loaded service; throws when it registered another service than announced. */
    private readonly install: (service: LazyService, register: (router: ConnectRouter) => void) => void,
    private readonly onLoadFailed?: (service: string, reason: unknown) => void,
  ) {
    this.byName = new Map(services.map((service) => [service.typeName, service]));
  }

  /** The service a call's path ("/dline.v1.SystemService/Health") belongs to. */
  serviceOf(path: string): LazyService | undefined {
    return this.byName.get(path.slice(1, path.lastIndexOf("/")));
  }

  load(service: LazyService): Promise<void> {
    let loading = this.loads.get(service.typeName);
    if (!loading) {
      loading = service.load().then((register) => this.install(service, register));
      this.loads.set(service.typeName, loading);
      loading.catch((reason: unknown) => {
        this.loads.delete(service.typeName);
        this.onLoadFailed?.(service.typeName, reason);
      });
    }
    return loading;
  }

  /** Starts loading a service before its first call; failures are reported as for a call. */
  preload(typeName: string): void {
    const service = this.byName.get(typeName);
    if (service) this.load(service).catch(() => {});
  }
}
