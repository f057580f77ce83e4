/**
 * The HTTP and stdio transport series of ../ahp-transport-series.ts in a process of their own,
 * printed as one JSON array of results. ../ahp-transport.bench.ts starts it under
 * `taskset -c 0`, so the harness, the echo servers and the backends all share one CPU.
 */
import { httpBench, setPlacement, stdioBench } from '../ahp-transport-series.js';

setPlacement(process.argv[2] ?? '');
const results = [...(await httpBench()), ...(await stdioBench())];
process.stdout.write(`${JSON.stringify(results)}\n`);
