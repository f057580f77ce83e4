/**
 * The MCP gateway's relay with nothing to judge or record: `runGateway` over a sink that allows
 * every call at once and records nothing, between our stdio and the server named by argv. What a
 * call through it costs beyond the direct call is the relay's own: two more pipe hops, the framing
 * and the reading of each line.
 */
import { runGateway } from '../../src/capture/mcp/gateway.js';

const [command, ...args] = process.argv.slice(2) as [string, ...string[]];
const exit = await runGateway({
  server: { name: 'everything', command, args, cwd: process.cwd() },
  env: process.env,
  harnessSession: 'bench-relay',
  sink: { decide: async () => ({ allow: true }), observe: async () => undefined },
  clientIn: process.stdin,
  clientOut: process.stdout,
});
process.stdin.destroy();
process.exitCode = exit.code ?? 1;
