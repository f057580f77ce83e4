/**
 * Pieces the MCP gateway tests share: the real MCP servers from node_modules, a real SDK client
 * whose transport is tapped (every message it sends and receives, in order), and the command line
 * that puts `tally mcp` in front of a server.
 */
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { TALLY_BIN } from '../cli/tally-process.js';

export const FS_SERVER = resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const EVERYTHING_SERVER = resolve(
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

export interface Tapped {
  client: Client;
  transport: StdioClientTransport;
  /** Every message in order: `out` the client sent, `in` it received. */
  log: ['out' | 'in', JSONRPCMessage][];
  stderr: () => string;
  close: () => Promise<void>;
}

/** The command line of `tally mcp` in front of `server`. */
export function throughGateway(name: string, server: string[], extra: string[] = []): string[] {
  return [process.execPath, TALLY_BIN, 'mcp', '--name', name, ...extra, '--', ...server];
}

/** A real SDK client over stdio to `argv`, its transport tapped. */
export async function connect(
  argv: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    capabilities?: ConstructorParameters<typeof Client>[1];
    before?: (client: Client) => void;
  },
): Promise<Tapped> {
  const [command, ...args] = argv as [string, ...string[]];
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: options.cwd,
    env: options.env,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const log: Tapped['log'] = [];
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    log.push(['out', message]);
    return send(message);
  };
  let inner: ((m: JSONRPCMessage) => void) | undefined;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => inner,
    set: (fn: ((m: JSONRPCMessage) => void) | undefined) => {
      inner =
        fn === undefined
          ? undefined
          : (m) => {
              log.push(['in', m]);
              fn(m);
            };
    },
  });
  const client = new Client({ name: 'tally-test', version: '1.0.0' }, options.capabilities ?? {});
  options.before?.(client);
  await client.connect(transport);
  return {
    client,
    transport,
    log,
    stderr: () => err,
    close: async () => {
      await client.close();
      await exited(transport);
    },
  };
}

/** Waits until the transport's process is gone (its pid no longer answers signal 0). */
async function exited(transport: StdioClientTransport): Promise<void> {
  const pid = transport.pid;
  if (pid === null) return;
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of a tool result's first text content. */
export function resultText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.find((c) => c.type === 'text')?.text ?? '';
}
