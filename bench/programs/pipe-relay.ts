/**
 * The least a gateway process can add to an MCP call: a process between the client and the
 * server that forwards bytes both ways and does nothing else — no framing, no parsing, no judging,
 * no recording. What a call through it costs beyond the direct call is two more pipe hops and a
 * process's wake-ups, the part of the gateway no implementation in this runtime can avoid.
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2) as [string, ...string[]];
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(server.stdin);
server.stdout.pipe(process.stdout);
server.on('exit', (code) => process.exit(code ?? 1));
process.stdin.on('end', () => server.stdin.end());
