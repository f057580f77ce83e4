/**
 * A scripted OpenAI Chat Completions API (Qwen Code, OpenCode): `POST /v1/chat/completions`,
 * streamed as `chat.completion.chunk` SSE ending in `[DONE]`, or one JSON completion. A request that
 * offers no tools is a side call (OpenCode asks for a session title that way) and is answered with
 * a short text without using a step.
 */
import type { ServerResponse } from 'node:http';
import type { ScriptInput, Step } from './script.js';
import { toScript } from './script.js';
import {
  asArray,
  asRecord,
  type ModelServer,
  startModelServer,
  stepPicker,
  writeJson,
  writeSse,
} from './server.js';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((c) => asRecord(c))
    .filter((c) => typeof c?.text === 'string')
    .map((c) => c!.text as string)
    .join('\n');
}

/** The user text that opens the conversation: user messages before the first assistant message. */
export function openingUserText(body: Record<string, unknown>): string {
  const texts: string[] = [];
  for (const message of asArray(body.messages)) {
    const m = asRecord(message);
    if (m?.role === 'assistant') break;
    if (m?.role === 'user') texts.push(textOf(m.content));
  }
  return texts.join('\n');
}

export function toolResults(body: Record<string, unknown>): number {
  return asArray(body.messages).filter((m) => asRecord(m)?.role === 'tool').length;
}

interface Answer {
  content: string | null;
  toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  finish: 'stop' | 'tool_calls';
}

function answerOf(step: Step, idPrefix: string): Answer {
  if ('text' in step) return { content: step.text, toolCalls: [], finish: 'stop' };
  return {
    content: null,
    toolCalls: step.calls.map((c, i) => ({
      id: `call_${idPrefix}_${i}`,
      type: 'function' as const,
      function: {
        name: c.tool,
        arguments: JSON.stringify(typeof c.input === 'string' ? { input: c.input } : c.input),
      },
    })),
    finish: 'tool_calls',
  };
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function send(res: ServerResponse, stream: boolean, id: string, model: string, a: Answer): void {
  const created = Math.floor(Date.now() / 1000);
  if (!stream) {
    const message = {
      role: 'assistant',
      content: a.content,
      ...(a.toolCalls.length > 0 ? { tool_calls: a.toolCalls } : {}),
    };
    writeJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, finish_reason: a.finish }],
      usage: USAGE,
    });
    return;
  }
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null,
    extra: Record<string, unknown> = {},
  ) => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    },
  });
  const events = [chunk({ role: 'assistant', content: a.content ?? '' }, null)];
  if (a.toolCalls.length > 0)
    events.push(chunk({ tool_calls: a.toolCalls.map((c, index) => ({ index, ...c })) }, null));
  events.push(chunk({}, a.finish, { usage: USAGE }));
  writeSse(res, events, '[DONE]');
}

export async function startChatServer(input: ScriptInput): Promise<ModelServer> {
  const script = toScript(input);
  const pick = stepPicker(script);
  const server = await startModelServer(async (req, res) => {
    const path = req.path.split('?')[0];
    const body = asRecord(req.body);
    if (req.method === 'GET' && path === '/v1/models') {
      writeJson(res, 200, {
        object: 'list',
        data: [{ id: 'scripted-model', object: 'model', owned_by: 'scripted' }],
      });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions' || !body) {
      server.unexpected.push(req);
      writeJson(res, 404, {
        error: { message: `no ${req.method} ${req.path}`, type: 'invalid_request_error' },
      });
      return;
    }
    const model = typeof body.model === 'string' ? body.model : 'scripted-model';
    const stream = body.stream === true;
    if (asArray(body.tools).length === 0) {
      req.thread = 'side-call';
      send(res, stream, 'chatcmpl-scripted-side', model, {
        content: 'Scripted session',
        toolCalls: [],
        finish: 'stop',
      });
      return;
    }
    const picked = await pick(openingUserText(body), toolResults(body));
    req.thread = picked.thread;
    req.step = picked.k;
    send(res, stream, `chatcmpl-scripted-${picked.idPrefix}`, model, answerOf(picked.step, picked.idPrefix));
  });
  return server;
}
