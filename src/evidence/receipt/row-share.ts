/**
 * The share of a receipt its open-ended lists take together. `files_written`, `files_read`,
 * `network` and `tool_calls` grow with the distinct paths, destinations and tools a session
 * touched, and each is named by the agent — a path may be 4,095 bytes, a tool name any length — so
 * without a bound a session could make a receipt its seal line cannot hold, and the close would
 * fail at every try. The lists take rows in that order while the share lasts; the rest are counted
 * (`<list>_omitted`) and stay in the package's records, and verification fails `receipt_complete`
 * (docs/receipt.md#bounds).
 */
import { ByteBudget, jsonBytes } from '../../core/json-budget.js';

/** The lists that share it, in the order they take rows. */
export const SHARED_LISTS = ['files_written', 'files_read', 'network', 'tool_calls'] as const;

/** What the four lists' rows may take together: half of what a seal's receipt can hold. */
export const ROW_SHARE_BYTES = 24 * 1024 * 1024;

/** The rows a list kept, and how many past the share it left out. */
export interface SharedRows<T> {
  rows: T[];
  omitted: number;
}

/**
 * Each list in the order given, cut where the share ends: a list before the cut whole, the one it
 * falls in up to it, every one after it empty.
 */
export function shareRows<T extends unknown[][]>(
  lists: [...T],
  limit = ROW_SHARE_BYTES,
): { [K in keyof T]: SharedRows<T[K][number]> } {
  const budget = new ByteBudget(limit);
  return lists.map((rows) => {
    const kept = budget.full ? 0 : keptCount(rows, budget);
    return { rows: kept === rows.length ? rows : rows.slice(0, kept), omitted: rows.length - kept };
  }) as { [K in keyof T]: SharedRows<T[K][number]> };
}

function keptCount(rows: readonly unknown[], budget: ByteBudget): number {
  let kept = 0;
  while (kept < rows.length && budget.take(jsonBytes(rows[kept]) + 1)) kept++;
  return kept;
}

/** `{ <name>_omitted: {count} }` when the list left rows out, else nothing. */
export function omittedField<N extends string>(
  name: N,
  shared: SharedRows<unknown>,
): Partial<Record<`${N}_omitted`, { count: number }>> {
  return shared.omitted === 0 ? {} : ({ [`${name}_omitted`]: { count: shared.omitted } } as never);
}
