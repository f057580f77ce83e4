/**
 * The summary groups of a `*_omitted` field, bounded (docs/receipt.md#bounds). A session can run
 * any number of distinct commands or hit any number of distinct rules, so without a bound the
 * summary of what was left out would grow with them, in the receipt and in the composer's memory.
 * At most GROUPS_MAX groups are kept: those first in the section's sort order, whatever order the
 * items arrive in. The items of every other group are counted in `groups_omitted`.
 *
 * Why first in sort order and not, say, the largest: a group's rank by key never changes, so a group
 * pushed out can never belong to the final set, and nothing about it has to be remembered. The
 * result depends only on the items, not on the order they are folded in.
 */

/** Summary groups kept per `*_omitted` field. */
export const GROUPS_MAX = 1000;

/** What every summary group counts. */
export interface Grouped {
  count: number;
  first_seq: number;
  last_seq: number;
}

/** The items of the groups not kept: how many, and the records they span. */
export interface GroupsOmitted {
  count: number;
  first_seq: number;
  last_seq: number;
}

interface Entry<G> {
  key: string;
  group: G;
}

export class KeptGroups<G extends Grouped> {
  private readonly byKey = new Map<string, G>();
  /** A max-heap in `order`: the first entry is the kept group that comes last. */
  private readonly heap: Entry<G>[] = [];
  private rest: GroupsOmitted | undefined;

  constructor(
    private readonly order: (a: G, b: G) => number,
    private readonly max = GROUPS_MAX,
  ) {}

  /**
   * The kept group of `key`, made with `make` (counting nothing yet) when it is new and comes
   * before the last kept one; undefined when the item belongs to a group that is not kept, which the
   * caller then counts with `countRest`.
   */
  group(key: string, make: () => G): G | undefined {
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const group = make();
    if (this.heap.length >= this.max) {
      const last = this.heap[0] as Entry<G>;
      if (this.order(group, last.group) >= 0) return undefined;
      this.popLast();
      this.byKey.delete(last.key);
      this.countRest(last.group.count, last.group.first_seq, last.group.last_seq);
    }
    this.push({ key, group });
    this.byKey.set(key, group);
    return group;
  }

  /** Counts `count` items spanning `firstSeq`..`lastSeq` among the groups not kept. */
  countRest(count: number, firstSeq: number, lastSeq: number): void {
    if (count === 0) return;
    const rest = this.rest;
    if (rest === undefined) {
      this.rest = { count, first_seq: firstSeq, last_seq: lastSeq };
      return;
    }
    rest.count += count;
    rest.first_seq = Math.min(rest.first_seq, firstSeq);
    rest.last_seq = Math.max(rest.last_seq, lastSeq);
  }

  /** The kept groups in order, and `groups_omitted` only when some group was not kept. */
  result(): { groups: G[]; groups_omitted?: GroupsOmitted } {
    const groups = this.heap.map((e) => e.group).sort(this.order);
    return this.rest === undefined ? { groups } : { groups, groups_omitted: { ...this.rest } };
  }

  private push(entry: Entry<G>): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.order((heap[parent] as Entry<G>).group, entry.group) >= 0) break;
      heap[i] = heap[parent] as Entry<G>;
      i = parent;
    }
    heap[i] = entry;
  }

  private popLast(): void {
    const heap = this.heap;
    const tail = heap.pop() as Entry<G>;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && this.order((heap[right] as Entry<G>).group, (heap[left] as Entry<G>).group) > 0
          ? right
          : left;
      if (this.order((heap[child] as Entry<G>).group, tail.group) <= 0) break;
      heap[i] = heap[child] as Entry<G>;
      i = child;
    }
    heap[i] = tail;
  }
}
