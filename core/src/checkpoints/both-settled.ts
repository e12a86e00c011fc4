/**
 * Two promises' values, answered (or failed) only once both have settled: `Promise.all` fails at
 * the first failure. A step under the repository lock runs a git writer beside a read
 * (write-tree beside HEAD's tree, update-index beside the listing of ignored files); with
 * `Promise.all`, a read that failed first ended the step while its writer still ran, writing
 * objects and the index after the failed step's leftovers were removed (write-leftovers.ts), or
 * beside the step's retry. Fails with the first promise's failure, else the second's.
 */
export async function bothSettled<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === "rejected") throw a.reason;
  if (b.status === "rejected") throw b.reason;
  return [a.value, b.value];
}
