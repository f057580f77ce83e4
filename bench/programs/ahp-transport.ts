/**
 * The HTTP and stdio transport series of ../ahp-transport-series.ts in a process of their own,
 * printed as one JSON array of results. ../ahp-transport.bench.ts starts it under
 * `taskset -c 0`, so the harness, the echo servers and the backends all share one CPU, and adds
 * the CPU time per stdio intercept of both processes (Linux).
 */
import { httpBench, setPlacement, stdioBench, stdioCpuBench } from '../ahp-transport-series.js';

setPlacement(process.argv[2] ?? '');
const results = [...(await httpBench()), ...(await stdioBench()), ...(await stdioCpuBench())];
process.stdout.write(`${JSON.stringify(results)}\n`);
