/**
 * Work under way, noted until it ends (however it ends), so that a stop or a deletion can wait
 * for it: the registry's saves, the restores a stopping process lets end.
 */
export class InFlight {
  private readonly work = new Set<Promise<void>>();

  get size(): number {
    return this.work.size;
  }

  /** Notes `work` until it ends; answers it as it is. */
  track<T>(work: Promise<T>): Promise<T> {
    const ended = work.then(
      () => undefined,
      () => undefined,
    );
    this.work.add(ended);
    void ended.then(() => this.work.delete(ended));
    return work;
  }

  /** Resolves once the work under way now has ended, or after `maxMs` when given. */
  async ended(maxMs?: number): Promise<void> {
    const all = Promise.all(this.work);
    if (maxMs === undefined) return all.then(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, maxMs)))]);
    clearTimeout(timer);
  }
}
