/**
 * `npm run bench`: loads every *.bench.js beside this file (or those named on the command line)
 * and prints one table of ratios. Add a benchmark by adding a file; nothing here changes.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchModule, BenchResult } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const rows: BenchResult[] = [];
for (const file of files) {
  const mod = (await import(join(here, file))).default as BenchModule;
  process.stderr.write(`# ${mod.title} (${file})\n`);
  for (const result of await mod.run()) {
    rows.push(result);
    process.stderr.write(
      `  ${result.name}: ${result.measured} vs ${result.baseline} -> ratio ${result.ratio.toFixed(3)} (target ${result.target})\n`,
    );
  }
}
console.log('| benchmark | measured | baseline (same run) | ratio | target |');
console.log('|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.name} | ${r.measured} | ${r.baseline} | ${r.ratio.toFixed(3)} | ${r.target} |`);
