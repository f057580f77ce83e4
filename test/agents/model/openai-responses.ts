/**
 * A scripted OpenAI Responses API (Codex): `POST /v1/responses`, streamed as SSE
 * (response.created, response.output_item.added/done, response.output_text.delta,
 * response.completed). A tool call whose input is a string becomes a freeform `custom_tool_call`
 * (Codex's apply_patch takes the raw patch text that way); an object becomes a `function_call`.
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

const RESULT_TYPES = new Set(['function_call_output', 'custom_tool_call_output', 'local_shell_call_output']);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((c) => asRecord(c))
    .map((c) => (typeof c?.text === 'string' ? c.text : c?.encrypted_content))
    .filter((t): t is string => typeof t === 'string')
    .join('\n');
}

/**
 * The user text that opens the conversation: every user message before the first model output.
 * A Codex subagent's task arrives as an `agent_message` from its parent (its payload in an
 * `encrypted_content` part, which Codex sends as the plain text), so that counts as opening text.
 */
export function openingUserText(body: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const item of asArray(body.input)) {
    const it = asRecord(item);
    if (!it) continue;
    if (it.type === 'agent_message') {
      parts.push(textOf(it.content));
      continue;
    }
    if (it.role === 'assistant' || (it.type !== undefined && it.type !== 'message')) break;
    if (it.role === 'user') parts.push(textOf(it.content));
  }
  return parts.join('\n');
}

export function toolResults(body: Record<string, unknown>): number {
  return asArray(body.input).filter((i) => RESULT_TYPES.has(String(asRecord(i)?.type))).length;
}

function itemsOf(step: Step, idPrefix: string, request: Record<string, unknown>): Record<string, unknown>[] {
  if ('text' in step) {
    return [
      {
        type: 'message',
        id: `msg_${idPrefix}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: step.text, annotations: [] }],
      },
    ];
  }
  return step.calls.map((c, i) =>
    typeof c.input === 'string'
      ? {
          type: 'custom_tool_call',
          id: `ctc_${idPrefix}_${i}`,
          call_id: `call_${idPrefix}_${i}`,
          name: c.tool,
          input: c.input,
          status: 'completed',
        }
      : {
          type: 'function_call',
          id: `fc_${idPrefix}_${i}`,
          call_id: `call_${idPrefix}_${i}`,
          name: c.tool,
          ...(c.namespace !== undefined ? { namespace: c.namespace } : {}),
          arguments: JSON.stringify(c.inputFrom ? c.inputFrom(request) : c.input),
          status: 'completed',
        },
  );
}

function stream(res: ServerResponse, id: string, model: string, items: Record<string, unknown>[]): void {
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const events: { event: string; data: unknown }[] = [
    {
      event: 'response.created',
      data: { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
    },
  ];
  items.forEach((item, output_index) => {
    const added =
      item.type === 'message'
        ? { ...item, status: 'in_progress', content: [] }
        : { ...item, status: 'in_progress' };
    events.push({
      event: 'response.output_item.added',
      data: { type: 'response.output_item.added', output_index, item: added },
    });
    if (item.type === 'message') {
      const text = String(asRecord(asArray(item.content)[0])?.text ?? '');
      events.push({
        event: 'response.output_text.delta',
        data: {
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index,
          content_index: 0,
          delta: text,
        },
      });
    }
    events.push({
      event: 'response.output_item.done',
      data: { type: 'response.output_item.done', output_index, item },
    });
  });
  events.push({
    event: 'response.completed',
    data: { type: 'response.completed', response: { ...base, status: 'completed', output: items, usage } },
  });
  writeSse(res, events);
}

export async function startResponsesServer(input: ScriptInput): Promise<ModelServer> {
  const script = toScript(input);
  const pick = stepPicker(script);
  const server = await startModelServer(async (req, res) => {
    const path = req.path.split('?')[0];
    const body = asRecord(req.body);
    if (req.method === 'GET' && path === '/v1/models') {
      writeJson(res, 200, { object: 'list', data: [] });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/responses' || !body) {
      server.unexpected.push(req);
      writeJson(res, 404, {
        error: { message: `no ${req.method} ${req.path}`, type: 'invalid_request_error' },
      });
      return;
    }
    const picked = await pick(openingUserText(body), toolResults(body));
    req.thread = picked.thread;
    req.step = picked.k;
    const items = itemsOf(picked.step, picked.idPrefix, body);
    const model = typeof body.model === 'string' ? body.model : 'scripted';
    const id = `resp_scripted_${picked.idPrefix}`;
    if (body.stream === false)
      writeJson(res, 200, { id, object: 'response', status: 'completed', model, output: items });
    else stream(res, id, model, items);
  });
  return server;
}
