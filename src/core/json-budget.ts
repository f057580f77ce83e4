/**
 * Byte budgets for what a record holds of a tree: a log line holds at most 64 MiB, the record's
 * payload base64 within it, so at most 48 MiB of JSON. The maps and lists of paths a start or a
 * close records grow with the tree (and with the length of the names an agent gives its files), so
 * each gets a share of that and stops, counted, where its share ends — never a record the log
 * refuses, which would stop the start or the close itself.
 */

/** The JSON a payload may hold at most: 48 MiB, base64 of which is the 64 MiB a line holds. */
export const PAYLOAD_BYTES = 48 * 1024 * 1024;

/**
 * A baseline's recorded maps together (`dirty`, `dirty_b64`, `git_state`): the start records one,
 * and the close one more (its end state) beside its corroborated paths.
 */
export const BASELINE_MAP_BYTES = 16 * 1024 * 1024;

/** The corroborated paths one reconcile record lists; the rest go in records of their own. */
export const CORROBORATED_BYTES = 16 * 1024 * 1024;

/** The changed paths a start's `since` lists (its count is always whole). */
export const SINCE_BYTES = 4 * 1024 * 1024;

/**
 * The bytes `value` adds to canonical JSON: RFC 8785 writes strings as JSON.stringify does, and
 * numbers and literals no longer than it.
 */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

const OVER = Symbol('over');

/**
 * `jsonBytes(value)` when it is at most `limit`, else a number past `limit`, counted member by
 * member without building the text: a receipt whose names the agent chose can be longer than a
 * string may be (JSON.stringify throws past 512 MiB), and it is measured to be cut.
 */
export function jsonBytesWithin(value: unknown, limit: number): number {
  // The text at once when a string can hold it (the common case, and the faster).
  try {
    return Math.min(jsonBytes(value), limit + 1);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  let used = 0;
  const add = (bytes: number): void => {
    used += bytes;
    if (used > limit) throw OVER;
  };
  const walk = (item: unknown): void => {
    if (item === null || typeof item !== 'object') {
      add(jsonBytes(item));
    } else if (Array.isArray(item)) {
      add(2 + Math.max(0, item.length - 1));
      for (const element of item)
        walk(element === undefined || typeof element === 'function' ? null : element);
    } else {
      add(2);
      let first = true;
      for (const [key, member] of Object.entries(item)) {
        if (member === undefined || typeof member === 'function') continue;
        add(jsonBytes(key) + (first ? 1 : 2));
        first = false;
        walk(member);
      }
    }
  };
  try {
    walk(value);
  } catch (error) {
    if (error === OVER) return limit + 1;
    throw error;
  }
  return used;
}

/** A share of a record: takes entries while they fit, and once one does not, takes no more. */
export class ByteBudget {
  private used = 0;
  private closed = false;

  constructor(readonly limit: number) {}

  /**
   * Whether an entry of `bytes` fits (and is now counted). Once one did not, none is taken, so a
   * list cut by the budget is a prefix of its order.
   */
  take(bytes: number): boolean {
    if (this.closed || this.used + bytes > this.limit) {
      this.closed = true;
      return false;
    }
    this.used += bytes;
    return true;
  }

  get full(): boolean {
    return this.closed;
  }
}

/** An object member's bytes: `"key":value,`. */
export function memberBytes(key: string, value: unknown): number {
  return jsonBytes(key) + jsonBytes(value) + 2;
}
