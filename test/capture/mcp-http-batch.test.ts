/**
 * JSON-RPC batches through `tally mcp --http URL`, in front of a real MCP SDK server (its
 * streamable-HTTP transport, answering with event streams and, in its JSON mode, JSON bodies) on
 * 127.0.0.1. MCP 2025-03-26 allows batches: each `tools/call` in one is judged before the server
 * sees it, a denied one is answered with an isError result in its place while the allowed ones are
 * forwarded, and all are recorded as single calls are. 2025-06-18 removed batches: there a batch
 * holding a call is refused whole. The oracle for "the server never saw it" is the server's own
 * log of the calls it ran.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Project } from '../cli/tally-process.js';
import { certifiedProject, type HttpGateway, startHttpGateway } from './mcp-fixture.js';

interface NotesServer {
  url: string;
  /** The calls the server ran, in order (`tool text`), and the notifications it got. */
  ran: string[];
  close(): Promise<void>;
}

/** A real SDK server with two tools, one transport per MCP session. */
async function startNotesServer(json: boolean): Promise<NotesServer> {
  const ran: string[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (transport === undefined) {
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: json,
          onsessioninitialized: (id) => {
            transports.set(id, fresh);
          },
        });
        const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, async () => ({
          tools: ['echo', 'write_note'].map((name) => ({
            name,
            inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
          })),
        }));
        server.setRequestHandler(CallToolRequestSchema, async (request) => {
          const text = String(request.params.arguments?.text ?? '');
          ran.push(`${request.params.name} ${text}`);
          return { content: [{ type: 'text', text: `${request.params.name}: ${text}` }] };
        });
        server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
          ran.push('roots changed');
        });
        await server.connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    ran,
    async close() {
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Every JSON-RPC message of an answer: a JSON body (one or an array) or an event stream's data. */
function messagesOf(type: string, text: string): Record<string, unknown>[] {
  const values: unknown[] = [];
  if (type.includes('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data !== '') values.push(JSON.parse(data));
    }
  } else if (text !== '') values.push(JSON.parse(text));
  return values.flat() as Record<string, unknown>[];
}

interface Posted {
  status: number;
  session: string | null;
  messages: Record<string, unknown>[];
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Posted> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    session: res.headers.get('mcp-session-id'),
    messages: messagesOf(res.headers.get('content-type') ?? '', text),
  };
}

/** initialize + notifications/initialized at `version`: the headers the session's requests carry. */
async function open(url: string, version: string): Promise<Record<string, string>> {
  const init = await post(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'batch-test', version: '1' } },
  });
  assert.equal(init.status, 200);
  assert.equal(
    (init.messages[0]?.result as { protocolVersion?: string } | undefined)?.protocolVersion,
    version,
  );
  const headers = { 'mcp-session-id': init.session!, 'mcp-protocol-version': version };
  const ready = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  assert.equal(ready.status, 202);
  return headers;
}

function call(id: number, name: string, text: string) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text } } };
}

function byId(messages: Record<string, unknown>[]): Map<unknown, Record<string, unknown>> {
  return new Map(messages.map((m) => [m.id, m]));
}

function resultText(message: Record<string, unknown> | undefined): string {
  const result = message?.result as { content?: { text?: string }[] } | undefined;
  return result?.content?.[0]?.text ?? '';
}

/** The records of a sealed package (between its header and its seal). */
function records(pkg: string): Record<string, unknown>[] {
  return readFileSync(pkg, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString()));
}

for (const mode of ['event stream', 'JSON'] as const) {
  describe(`tally mcp --http: JSON-RPC batches (the SDK server answering with ${mode === 'JSON' ? 'JSON bodies' : 'event streams'})`, () => {
    let project: Project;
    let notes: NotesServer;
    let gateway: HttpGateway;
    let local: string;

    before(async () => {
      project = await certifiedProject('tally-mcp-batch-', 'notes', 'write_note');
      notes = await startNotesServer(mode === 'JSON');
      gateway = await startHttpGateway(project, notes.url, 'notes');
      local = gateway.url;
    });

    after(async () => {
      gateway.child.kill('SIGKILL');
      await notes.close();
    });

    it('2025-03-26: each call judged; the denied one answered in its place, the others run; all recorded', async () => {
      const headers = await open(local, '2025-03-26');
      notes.ran.length = 0;
      const batch = await post(
        local,
        [call(1, 'echo', 'one'), call(2, 'write_note', 'secret'), call(3, 'echo', 'three')],
        headers,
      );
      assert.equal(batch.status, 200);
      const answers = byId(batch.messages);
      assert.deepEqual([...answers.keys()].sort(), [1, 2, 3]);
      assert.equal(resultText(answers.get(1)), 'echo: one');
      assert.equal(resultText(answers.get(3)), 'echo: three');
      assert.equal((answers.get(2)?.result as { isError?: boolean } | undefined)?.isError, true);
      assert.match(resultText(answers.get(2)), /mcp__notes__write_note/);
      assert.deepEqual(notes.ran, ['echo one', 'echo three'], 'the server never saw the denied call');

      // Only denied calls (and a notification): answered here; the notification still reaches the server.
      const denied = await post(
        local,
        [call(4, 'write_note', 'a'), { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }],
        headers,
      );
      assert.equal(denied.status, 200);
      assert.deepEqual(
        denied.messages.map((m) => [m.id, (m.result as { isError?: boolean }).isError]),
        [[4, true]],
      );
      assert.deepEqual(notes.ran, ['echo one', 'echo three', 'roots changed']);
      const alone = await post(local, [call(5, 'write_note', 'b'), call(6, 'write_note', 'c')], headers);
      assert.deepEqual(
        alone.messages.map((m) => m.id),
        [5, 6],
      );
      assert.deepEqual(notes.ran, ['echo one', 'echo three', 'roots changed']);
    });

    it('2025-06-18 has no batches: one holding a call is refused whole, unseen by the server; single calls go on', async () => {
      const headers = await open(local, '2025-06-18');
      notes.ran.length = 0;
      const refused = await post(local, [call(11, 'echo', 'x'), call(12, 'write_note', 'y')], headers);
      assert.equal(refused.status, 400);
      const error = refused.messages[0]?.error as { code?: number; message?: string };
      assert.equal(error.code, -32600);
      assert.match(String(error.message), /2025-06-18/);
      assert.deepEqual(notes.ran, []);
      const single = await post(local, call(13, 'echo', 'single'), headers);
      assert.equal(resultText(single.messages[0]), 'echo: single');
      assert.deepEqual(notes.ran, ['echo single']);
      // A call without an id could not be told of a denial: never forwarded, refused here.
      const { id: _id, ...notification } = call(14, 'echo', 'unjudged') as Record<string, unknown>;
      const unanswerable = await post(local, notification, headers);
      assert.equal(unanswerable.status, 400);
      assert.match(
        String((unanswerable.messages[0]?.error as { message?: string } | undefined)?.message),
        /must carry an id/,
      );
      assert.deepEqual(notes.ran, ['echo single']);
    });

    it('the sealed package verifies, with every batched call recorded as a single call is', async () => {
      const exited = new Promise((r) => gateway.child.once('exit', r));
      gateway.child.kill('SIGTERM');
      await exited;
      const sealed = /sealed: (\S+\.tally)/.exec(gateway.stderr());
      assert.ok(sealed, gateway.stderr());
      const verify = await project.tally(['verify', sealed[1]!, '--certificate', 'coder', '--json']);
      assert.equal(verify.code, 0, verify.stdout);
      const all = records(sealed[1]!);
      const before = all.filter((r) => (r.event as { type?: string }).type === 'tool.before');
      const summary = before.map((r) => {
        const event = r.event as { tool: { name: string; input: { text: string } } };
        return `${event.tool.name} ${event.tool.input.text} ${(r.decision as { decision: string }).decision}`;
      });
      assert.deepEqual(summary, [
        'mcp__notes__echo one allow',
        'mcp__notes__write_note secret deny',
        'mcp__notes__echo three allow',
        'mcp__notes__write_note a deny',
        'mcp__notes__write_note b deny',
        'mcp__notes__write_note c deny',
        'mcp__notes__echo single allow',
      ]);
      // The calls that ran have their answers recorded; the denied ones have none.
      const ended = all
        .filter((r) => (r.event as { type?: string }).type === 'tool.after')
        .map(
          (r) =>
            `${(r.event as { tool: { name: string } }).tool.name} ${(r.event as { outcome: string }).outcome}`,
        );
      assert.deepEqual(ended, ['mcp__notes__echo ok', 'mcp__notes__echo ok', 'mcp__notes__echo ok']);
    });
  });
}
