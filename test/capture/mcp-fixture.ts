/**
 * Pieces the MCP gateway tests share: the real MCP servers from node_modules, a real SDK client
 * whose transport is tapped (every message it sends and receives, in order), the command line
 * that puts `tally mcp` in front of a server, a project under a certificate for one server, and
 * `tally mcp --http` started in front of a remote one.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { makeProject, type Project, TALLY_BIN } from '../cli/tally-process.js';

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

/** `tally init`, then a certificate `coder` with these `--allow`/`--forbid` flags; both must succeed. */
export async function certify(project: Project, flags: string[]): Promise<void> {
  for (const args of [['init'], ['agent', 'register', '--name', 'coder', ...flags]]) {
    const ran = await project.tally(args);
    assert.equal(ran.code, 0, ran.stderr);
  }
}

/** A fresh project with a certificate `coder` allowing every tool of `server` but `forbidden`. */
export async function certifiedProject(prefix: string, server: string, forbidden: string): Promise<Project> {
  const project = makeProject(prefix);
  await certify(project, ['--allow', `mcp__${server}__*`, '--forbid', `mcp__${server}__${forbidden}`]);
  return project;
}

/** A project with a session open under a certificate allowing the fs server's tools, a folder forbidden. */
export async function certified(prefix: string): Promise<Project> {
  const project = makeProject(prefix);
  mkdirSync(join(project.root, 'secret'));
  for (const args of [
    ['init'],
    ['agent', 'register', '--name', 'coder', '--allow', 'mcp__fs__*', '--forbid', 'Write(secret/**)'],
    ['session', 'start', '--agent', 'coder'],
  ]) {
    const ran = await project.tally(args);
    assert.equal(ran.code, 0, ran.stderr);
  }
  return project;
}

/** The entry as written runs the server through the gateway: the forbidden write is denied. */
export async function assertGatewayDenies(
  entry: { command: string; args: string[] },
  root: string,
  env: Record<string, string>,
): Promise<void> {
  const tapped = await connect([entry.command, ...entry.args], { cwd: root, env });
  try {
    const denied = await tapped.client.callTool({
      name: 'write_file',
      arguments: { path: join(root, 'secret/x.txt'), content: 'no' },
    });
    assert.equal(denied.isError, true);
    assert.match(resultText(denied), /Write\(secret\/\*\*\)/);
  } finally {
    await tapped.close();
  }
}

/** Resolves with the first text on the child's `stream` matching `pattern`; rejects if it exits first. */
export function waitFor(child: ChildProcess, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child[stream]!.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      const m = pattern.exec(text);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${text}`)));
  });
}

export interface HttpGateway {
  child: ChildProcess;
  /** The local streamable-HTTP endpoint it printed. */
  url: string;
  /** Its stderr so far (where it says what it sealed). */
  stderr: () => string;
}

/** `tally mcp --http <remote> --name <name> --agent coder`, run in the project, once it listens. */
export async function startHttpGateway(project: Project, remote: string, name: string): Promise<HttpGateway> {
  const child = spawn(
    process.execPath,
    [TALLY_BIN, 'mcp', '--http', remote, '--name', name, '--agent', 'coder'],
    {
      cwd: project.root,
      env: project.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const url = await waitFor(child, 'stdout', /http:\/\/127\.0\.0\.1:\d+\/mcp/);
  return { child, url, stderr: () => err };
}

/** RFC 8785 for the plain values a tool result holds (strings, small integers, objects, arrays). */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** A port free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The real server-everything over streamable HTTP on a free port, and its URL, once it listens. */
export async function startEverythingHttp(project: Project): Promise<{ server: ChildProcess; url: string }> {
  const port = await freePort();
  const server = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { ...project.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await waitFor(server, 'stderr', /listening on port \d+/);
  } catch (error) {
    server.kill('SIGKILL');
    throw error;
  }
  return { server, url: `http://127.0.0.1:${port}/mcp` };
}
