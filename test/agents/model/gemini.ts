/**
 * A scripted Gemini API (Gemini CLI): `POST /v1beta/models/<m>:streamGenerateContent?alt=sse` for
 * the turns (one SSE chunk per answer), and `:generateContent` for its side calls — the model router
 * and similar JSON-schema questions — which are answered from their schema without using a step.
 */
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

function partsOf(content: unknown): Record<string, unknown>[] {
  return asArray(asRecord(content)?.parts).map((p) => asRecord(p) ?? {});
}

/** The user text that opens the conversation: user parts before the first model content. */
export function openingUserText(body: Record<string, unknown>): string {
  const texts: string[] = [];
  for (const content of asArray(body.contents)) {
    if (asRecord(content)?.role === 'model') break;
    for (const p of partsOf(content)) if (typeof p.text === 'string') texts.push(p.text);
  }
  return texts.join('\n');
}

export function toolResults(body: Record<string, unknown>): number {
  return asArray(body.contents)
    .flatMap((c) => partsOf(c))
    .filter((p) => p.functionResponse !== undefined).length;
}

function candidateParts(step: Step): Record<string, unknown>[] {
  if ('text' in step) return [{ text: step.text }];
  return step.calls.map((c) => ({
    functionCall: { name: c.tool, args: typeof c.input === 'string' ? { input: c.input } : c.input },
  }));
}

function answer(parts: Record<string, unknown>[]): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'scripted',
  };
}

/**
 * A minimal object satisfying a JSON schema: the side calls ask for one (the router wants a model
 * choice). Enums take their first value, except the choices that would keep the agent talking;
 * the loop check Gemini CLI runs after 30 turns is told there is no loop.
 */
export function sample(schema: unknown, name = ''): unknown {
  const s = asRecord(schema) ?? {};
  const type = String(s.type ?? '').toLowerCase();
  const choices = asArray(s.enum).map(String);
  if (name === 'next_speaker') return 'user';
  if (name === 'unproductive_state_confidence') return 0;
  if (name === 'model_choice') return choices.includes('flash') ? 'flash' : (choices[0] ?? 'flash');
  if (choices.length > 0) return choices[0];
  if (type === 'object' || s.properties) {
    const props = asRecord(s.properties) ?? {};
    return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sample(v, k)]));
  }
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'number' || type === 'integer') return typeof s.minimum === 'number' ? s.minimum : 1;
  return 'scripted';
}

export async function startGeminiServer(input: ScriptInput): Promise<ModelServer> {
  const script = toScript(input);
  const pick = stepPicker(script);
  const server = await startModelServer(async (req, res) => {
    const path = req.path.split('?')[0] ?? '';
    const body = asRecord(req.body);
    const method = path.slice(path.lastIndexOf(':') + 1);
    if (req.method !== 'POST' || !path.startsWith('/v1beta/models/') || !body) {
      server.unexpected.push(req);
      writeJson(res, 404, {
        error: { code: 404, message: `no ${req.method} ${req.path}`, status: 'NOT_FOUND' },
      });
      return;
    }
    if (method === 'countTokens') {
      writeJson(res, 200, { totalTokens: 10 });
      return;
    }
    if (method === 'generateContent') {
      const config = asRecord(body.generationConfig) ?? {};
      const schema = config.responseJsonSchema ?? config.responseSchema;
      req.thread = 'side-call';
      writeJson(res, 200, answer([{ text: schema ? JSON.stringify(sample(schema)) : 'scripted' }]));
      return;
    }
    if (method !== 'streamGenerateContent') {
      server.unexpected.push(req);
      writeJson(res, 404, { error: { code: 404, message: `no method ${method}`, status: 'NOT_FOUND' } });
      return;
    }
    const picked = await pick(openingUserText(body), toolResults(body));
    req.thread = picked.thread;
    req.step = picked.k;
    writeSse(res, [{ data: answer(candidateParts(picked.step)) }]);
  });
  return server;
}
