/**
 * A scripted Anthropic Messages API (Claude Code): `POST /v1/messages?beta=true`, streamed as SSE
 * (message_start, content_block_start/delta/stop, message_delta, message_stop) or as one JSON
 * message when the request does not ask for a stream.
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

interface Block {
  type: string;
  [key: string]: unknown;
}

/** The text of the first user message (a string or its text blocks joined). */
export function firstUserText(body: Record<string, unknown>): string {
  for (const message of asArray(body.messages)) {
    const m = asRecord(message);
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return asArray(m.content)
      .map((b) => asRecord(b))
      .filter((b) => b?.type === 'text' && typeof b.text === 'string')
      .map((b) => b!.text as string)
      .join('\n');
  }
  return '';
}

/** How many tool_result blocks the conversation holds. */
export function toolResults(body: Record<string, unknown>): number {
  let n = 0;
  for (const message of asArray(body.messages)) {
    const m = asRecord(message);
    if (m?.role !== 'user') continue;
    for (const b of asArray(m.content)) if (asRecord(b)?.type === 'tool_result') n++;
  }
  return n;
}

function contentOf(step: Step, idPrefix: string): Block[] {
  if ('text' in step) return [{ type: 'text', text: step.text }];
  return step.calls.map((c, i) => ({
    type: 'tool_use',
    id: `toolu_${idPrefix}_${i}`,
    name: c.tool,
    input: typeof c.input === 'string' ? { input: c.input } : c.input,
  }));
}

function stream(res: ServerResponse, model: string, content: Block[], stopReason: string, id: string): void {
  const events: { event: string; data: unknown }[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
    },
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
        },
        {
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } },
        },
      );
    } else {
      events.push(
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index, content_block: { ...block, input: {} } },
        },
        {
          event: 'content_block_delta',
          data: {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
          },
        },
      );
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  writeSse(res, events);
}

export async function startAnthropicServer(input: ScriptInput): Promise<ModelServer> {
  const script = toScript(input);
  const pick = stepPicker(script);
  const server = await startModelServer(async (req, res) => {
    const path = req.path.split('?')[0];
    const body = asRecord(req.body);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      writeJson(res, 200, { input_tokens: 10 });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages' || !body) {
      server.unexpected.push(req);
      writeJson(res, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: `no ${req.method} ${req.path}` },
      });
      return;
    }
    const picked = await pick(firstUserText(body), toolResults(body));
    req.thread = picked.thread;
    req.step = picked.k;
    const content = contentOf(picked.step, picked.idPrefix);
    const stopReason = 'calls' in picked.step ? 'tool_use' : 'end_turn';
    const model = typeof body.model === 'string' ? body.model : 'claude-scripted';
    const id = `msg_scripted_${picked.idPrefix}`;
    if (body.stream === true) stream(res, model, content, stopReason, id);
    else {
      writeJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      });
    }
  });
  return server;
}
