/** A small seeded PRNG (mulberry32) so generated cases are reproducible from the seed in a failure message. */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }
}

/** Case counts: small in `npm test`, larger with TALLY_FUZZ_CASES (`npm run fuzz`). */
export function caseCount(defaultCount: number): number {
  const raised = Number(process.env.TALLY_FUZZ_CASES);
  return Number.isInteger(raised) && raised > 0 ? raised : defaultCount;
}

/** The seed: TALLY_FUZZ_SEED to replay a failure, else a fixed one so `npm test` is deterministic. */
export function fuzzSeed(fallback: number): number {
  const seed = Number(process.env.TALLY_FUZZ_SEED);
  return Number.isInteger(seed) ? seed : fallback;
}
