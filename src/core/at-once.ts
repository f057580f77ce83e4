/**
 * Work on many items with a few at once: short child processes (a git command a repository) are
 * waited on, not computed, so a few in flight use both cores without starting hundreds together.
 */

/**
 * Calls `fn` on every item, at most `width` at a time, in order of start. The first failure stops
 * new starts; those in flight are waited for, then it is thrown.
 */
export async function eachAtOnce<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  if (failed !== undefined) throw failed.error;
}
