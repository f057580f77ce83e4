/**
 * The harness itself, without any agent: step picking, the four scripted APIs' answers, the egress
 * sink, and the install check's message. Real sockets on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { startEgressSink } from './egress.js';
import { ensureAgent } from './install.js';
import { startAnthropicServer } from './model/anthropic.js';
import { startGeminiServer } from './model/gemini.js';
import { startChatServer } from './model/openai-chat.js';
import { startResponsesServer } from './model/openai-responses.js';
import { call, calls, stepIndex, text } from './model/script.js';
import type { ModelServer } from './model/server.js';
import { toToml } from './profiles/toml.js';
import { leftovers } from './temp.js';

function post(url: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The JSON payloads of an SSE stream's data lines. */
function sseData(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as unknown);
}

async function withServer(server: ModelServer, body: (s: ModelServer) => Promise<void>): Promise<void> {
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

describe('agent harness', () => {
  after(() => assert.deepEqual(leftovers(), { dirs: [], processes: [] }));

  it('picks the step from the tool results already answered (several calls in one turn count as one step)', () => {
    const steps = [call('A', {}), calls({ tool: 'B', input: {} }, { tool: 'C', input: {} }), text('done')];
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((n) => stepIndex(steps, n)),
      [0, 1, 1, 2, 2],
    );
    assert.equal(stepIndex([call('A', {})], 1), 1, 'past the end: the fallback text');
  });

  it('Anthropic: streams tool_use blocks, is stateless across retries, and runs beforeStep once per step', async () => {
    const seen: number[] = [];
    const script = {
      steps: [call('Write', { file_path: '/x', content: 'y' }), text('ok')],
      beforeStep: (k: number) => void seen.push(k),
    };
    await withServer(await startAnthropicServer(script), async (s) => {
      const first = { model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] };
      const a = sseData((await post(s.url, '/v1/messages?beta=true', first)).text);
      const again = sseData((await post(s.url, '/v1/messages?beta=true', first)).text);
      assert.deepEqual(again, a, 'a retried request gets the same answer');
      const start = a.find((e) => (e as { type: string }).type === 'content_block_start') as {
        content_block: unknown;
      };
      assert.deepEqual(start.content_block, {
        type: 'tool_use',
        id: 'toolu_m_0_0',
        name: 'Write',
        input: {},
      });
      const delta = a.find((e) => (e as { type: string }).type === 'content_block_delta') as {
        delta: { partial_json: string };
      };
      assert.deepEqual(JSON.parse(delta.delta.partial_json), { file_path: '/x', content: 'y' });
      const answered = {
        ...first,
        messages: [
          ...first.messages,
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_m_0_0', content: 'done' }] },
        ],
      };
      const b = sseData((await post(s.url, '/v1/messages?beta=true', answered)).text);
      assert.ok(JSON.stringify(b).includes('"stop_reason":"end_turn"'));
      assert.deepEqual(seen, [0, 1]);
      assert.deepEqual(
        s.requests.map((r) => [r.method, r.path, r.step]),
        [
          ['POST', '/v1/messages?beta=true', 0],
          ['POST', '/v1/messages?beta=true', 0],
          ['POST', '/v1/messages?beta=true', 1],
        ],
      );
      assert.equal((await post(s.url, '/v1/other', {})).status, 404);
      assert.equal(s.unexpected.length, 1);
    });
  });

  it('Anthropic: a thread gives a subagent conversation its own steps', async () => {
    const script = {
      steps: [call('Agent', { prompt: 'SUB-1 do it' }), text('main done')],
      threads: [{ match: 'SUB-1', steps: [text('sub done')] }],
    };
    await withServer(await startAnthropicServer(script), async (s) => {
      const sub = await post(s.url, '/v1/messages', {
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'SUB-1 do it' }] }],
      });
      assert.equal((JSON.parse(sub.text) as { content: { text: string }[] }).content[0]?.text, 'sub done');
      assert.equal(s.requests[0]?.thread, 'SUB-1');
    });
  });

  it('Responses: a string input becomes a custom_tool_call, an object a function_call', async () => {
    const script = [
      calls(
        { tool: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
        { tool: 'exec_command', input: { cmd: 'ls' } },
      ),
    ];
    await withServer(await startResponsesServer(script), async (s) => {
      const events = sseData(
        (await post(s.url, '/v1/responses', { model: 'm', input: [], stream: true })).text,
      );
      const done = events.find((e) => (e as { type: string }).type === 'response.completed') as {
        response: { output: { type: string }[] };
      };
      assert.deepEqual(
        done.response.output.map((o) => o.type),
        ['custom_tool_call', 'function_call'],
      );
    });
  });

  it('Gemini: streams functionCall parts and answers the router side call from its schema without a step', async () => {
    await withServer(await startGeminiServer([call('write_file', { file_path: '/x' })]), async (s) => {
      const schema = {
        type: 'object',
        properties: {
          model_choice: { type: 'string', enum: ['pro', 'flash'] },
          score: { type: 'integer', minimum: 1 },
        },
      };
      const router = await post(s.url, '/v1beta/models/m:generateContent', {
        contents: [],
        generationConfig: { responseJsonSchema: schema },
      });
      const text = (JSON.parse(router.text) as { candidates: { content: { parts: { text: string }[] } }[] })
        .candidates[0]?.content.parts[0]?.text;
      assert.deepEqual(JSON.parse(text ?? ''), { model_choice: 'flash', score: 1 });
      const turn = sseData(
        (await post(s.url, '/v1beta/models/m:streamGenerateContent?alt=sse', { contents: [] })).text,
      );
      assert.deepEqual(JSON.stringify(turn[0]).includes('"functionCall":{"name":"write_file"'), true);
      assert.deepEqual(
        s.requests.map((r) => r.thread),
        ['side-call', 'main'],
      );
    });
  });

  it('Chat Completions: streams tool_calls chunks ending in [DONE]; a request without tools is a side call', async () => {
    await withServer(await startChatServer([call('write', { filePath: '/x' })]), async (s) => {
      const title = await post(s.url, '/v1/chat/completions', { model: 'm', messages: [] });
      assert.equal(JSON.parse(title.text).choices[0].message.content, 'Scripted session');
      const res = await post(s.url, '/v1/chat/completions', {
        model: 'm',
        stream: true,
        tools: [{}],
        messages: [],
      });
      assert.ok(res.text.trimEnd().endsWith('data: [DONE]'));
      const chunks = sseData(res.text) as {
        choices: { delta: { tool_calls?: unknown[] }; finish_reason: string | null }[];
      }[];
      assert.ok(chunks.some((c) => c.choices[0]?.delta.tool_calls?.length === 1));
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls');
    });
  });

  it('the egress sink refuses plain requests and CONNECT tunnels with 403 and records both', async () => {
    const sink = await startEgressSink();
    try {
      const { port } = new URL(sink.url);
      const plain = await new Promise<number>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path: 'http://example.invalid/x', method: 'GET' },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(plain, 403);
      const tunnel = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write('CONNECT example.invalid:443 HTTP/1.1\r\nHost: example.invalid:443\r\n\r\n'),
        );
        let answer = '';
        socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
      assert.match(tunnel, /^HTTP\/1\.1 403/);
      assert.deepEqual(
        sink.attempts.map((a) => [a.method, a.target]),
        [
          ['GET', 'http://example.invalid/x'],
          ['CONNECT', 'example.invalid:443'],
        ],
      );
      assert.equal(sink.env.NO_PROXY, '127.0.0.1,localhost');
    } finally {
      await sink.close();
    }
  });

  it('ensureAgent fails with the reason and the fix when the agents are not installed', async () => {
    const saved = process.env.TALLY_AGENT_CACHE;
    process.env.TALLY_AGENT_CACHE = '/nonexistent/tally-agent-cache';
    try {
      await assert.rejects(
        ensureAgent('claude-code'),
        /not installed at its pinned version .*node scripts\/agents-install\.mjs/,
      );
    } finally {
      if (saved === undefined) delete process.env.TALLY_AGENT_CACHE;
      else process.env.TALLY_AGENT_CACHE = saved;
    }
  });

  it('writes the TOML Codex reads: nested tables and arrays of tables', () => {
    const toml = toToml({
      model: 'm',
      a: { b: 1 },
      hooks: { PreToolUse: [{ matcher: '', hooks: [{ type: 'command', command: 'x' }] }] },
    });
    assert.equal(
      toml,
      'model = "m"\n\n[a]\nb = 1\n\n[[hooks.PreToolUse]]\nmatcher = ""\n\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "x"\n',
    );
  });
});
