/**
 * Rules an intercept response must meet in the context of the request it answers: id correlation,
 * effects limited to what the request advertised (types, modify targets and operations, flow
 * operations and remaining continuations, injection delivery), and the boundary's edit contract
 * (AHP-EDIT-001): which value shape a target takes at this event, no whole-list replace over
 * withheld content, no new attachment bytes, and the MCP elicitation answer rules.
 */

import { parseJson } from '../../core/canonical.js';
import { isJsonObject } from '../../core/json.js';
import { catalogueEntry } from '../protocol/catalogue.js';
import { readPath, targetLocation } from '../protocol/edit-targets.js';
import type { Issue } from '../registration/types.js';
import { attachmentRefs, withholdsContent } from './content.js';
import { interceptResponse } from './jsonrpc.js';
import { at, collect, issue, type JsonObject } from './shape.js';

export interface InterceptRequestContext {
  id: string | number;
  params: { event: { id: string; type: string }; capabilities?: unknown };
}

/** Roles a message list must keep at boundaries whose event fixes the role. */
const FIXED_ROLES: Record<string, Record<string, string>> = {
  'user.message.inbound': { prompt: 'user' },
  'user.message.outbound': { content: 'assistant' },
};

function advertisedEffects(capabilities: unknown): unknown[] {
  return isJsonObject(capabilities) && Array.isArray(capabilities.effects) ? capabilities.effects : [];
}

/** The MCP answer object (`content`) of the current elicitation result, when the event carries it. */
function elicitationAnswer(event: JsonObject): unknown {
  const result = readPath(event, ['elicitation', 'result']);
  if (!isJsonObject(result) || typeof result.text !== 'string') return undefined;
  try {
    const parsed: unknown = parseJson(result.text);
    return isJsonObject(parsed) ? parsed.content : undefined;
  } catch {
    return undefined;
  }
}

function isElicitationValue(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function checkElicitationEdit(effect: JsonObject, event: JsonObject, pointer: string, out: Issue[]): void {
  const mode = readPath(event, ['elicitation', 'mode']);
  const action = readPath(event, ['elicitation', 'action']);
  if (mode !== 'form') {
    issue(
      out,
      at(pointer, 'target'),
      'edit.elicitation-mode',
      `an elicitation answer can be edited only in form mode, not ${JSON.stringify(mode)}`,
    );
  }
  if (action !== 'accept') {
    issue(
      out,
      at(pointer, 'target'),
      'edit.elicitation-action',
      `an elicitation answer exists only for action "accept", not ${JSON.stringify(action)}`,
    );
  }
  const value = effect.value;
  if (!isJsonObject(value)) {
    issue(
      out,
      at(pointer, 'value'),
      'edit.content-shape',
      'at user.elicitation.result the content value must be the MCP answer object',
    );
    return;
  }
  for (const [key, member] of Object.entries(value)) {
    if (!isElicitationValue(member)) {
      issue(
        out,
        at(at(pointer, 'value'), key),
        'edit.elicitation-value',
        'an MCP form answer value must be a string, number, boolean or list of strings',
      );
    }
  }
  const current = elicitationAnswer(event);
  if (effect.operation === 'merge' && current !== undefined && !isJsonObject(current)) {
    issue(
      out,
      at(pointer, 'operation'),
      'edit.merge-non-object',
      'the current answer is not an object, so it cannot be merged',
    );
  }
}

function checkListEdit(effect: JsonObject, current: unknown, pointer: string, out: Issue[]): void {
  if (!Array.isArray(effect.value)) {
    issue(out, at(pointer, 'value'), 'edit.content-shape', 'this target takes a list at this boundary');
    return;
  }
  if (effect.operation === 'replace' && withholdsContent(current)) {
    issue(
      out,
      at(pointer, 'operation'),
      'edit.replace-withheld',
      'a whole-list replace is not allowed while the target holds withheld content',
    );
  }
  const known = new Set(attachmentRefs(current));
  for (const ref of attachmentRefs(effect.value)) {
    if (!known.has(ref)) {
      issue(
        out,
        at(pointer, 'value'),
        'edit.attachment-bytes',
        `attachment ref ${JSON.stringify(ref)} is not in the current target: an effect cannot add or change attachment bytes`,
      );
    }
  }
}

function checkModify(
  effect: JsonObject,
  event: JsonObject,
  capabilities: unknown,
  pointer: string,
  out: Issue[],
): void {
  const target = effect.target;
  const operation = effect.operation;
  if (typeof target !== 'string' || (operation !== 'replace' && operation !== 'merge')) return;
  const type = String(event.type);
  const grants =
    isJsonObject(capabilities) && isJsonObject(capabilities.modify) ? capabilities.modify[target] : undefined;
  if (!isJsonObject(grants)) {
    issue(
      out,
      at(pointer, 'target'),
      'effect.target-not-advertised',
      `modify(${target}) was not advertised for this request`,
    );
  } else if (grants[operation] !== true) {
    issue(
      out,
      at(pointer, 'operation'),
      'effect.operation-not-advertised',
      `modify(${target}) ${operation} was not advertised for this request`,
    );
  }
  const location = targetLocation(type, target);
  if (!location) {
    issue(out, at(pointer, 'target'), 'effect.target-out-of-bounds', `${type} has no '${target}' target`);
    return;
  }
  const role = FIXED_ROLES[type]?.[target];
  if (location.shape === 'json-text') {
    checkElicitationEdit(effect, event, pointer, out);
    return;
  }
  if (location.shape === 'object') {
    const current = readPath(event, location.path);
    if (operation === 'merge' && current !== undefined && !isJsonObject(current)) {
      issue(
        out,
        at(pointer, 'operation'),
        'edit.merge-non-object',
        'the current target is not an object, so it cannot be merged',
      );
    }
    return;
  }
  checkListEdit(effect, readPath(event, location.path), pointer, out);
  if (role && Array.isArray(effect.value)) {
    effect.value.forEach((entry, index) => {
      if (isJsonObject(entry) && entry.role !== role) {
        issue(
          out,
          at(at(at(pointer, 'value'), index), 'role'),
          'edit.role',
          `messages at ${type} must have role "${role}"`,
        );
      }
    });
  }
}

function checkFlow(effect: JsonObject, capabilities: unknown, pointer: string, out: Issue[]): void {
  const flow = isJsonObject(capabilities) && isJsonObject(capabilities.flow) ? capabilities.flow : undefined;
  const operations = flow && Array.isArray(flow.operations) ? flow.operations : [];
  if (!operations.includes(effect.operation)) {
    issue(
      out,
      at(pointer, 'operation'),
      'effect.operation-not-advertised',
      `flow ${JSON.stringify(effect.operation)} was not advertised for this request`,
    );
  } else if (
    effect.operation === 'continue' &&
    flow &&
    typeof flow.remainingContinuations === 'number' &&
    flow.remainingContinuations < 1
  ) {
    issue(
      out,
      at(pointer, 'operation'),
      'flow.continuations-exhausted',
      'no continuation remains in the advertised allowance',
    );
  }
}

function checkInject(effect: JsonObject, capabilities: unknown, pointer: string, out: Issue[]): void {
  const context = readPath(capabilities, ['inject', 'context']);
  const deliverAt = isJsonObject(context) && Array.isArray(context.deliverAt) ? context.deliverAt : [];
  if (!deliverAt.includes(effect.deliverAt)) {
    issue(
      out,
      at(pointer, 'deliverAt'),
      'effect.delivery-not-advertised',
      `injection at ${JSON.stringify(effect.deliverAt)} was not advertised for this request`,
    );
  }
}

/**
 * Validate a response to `request`: the response's own shape, then every contextual rule. An empty
 * list means the response may be accepted as a whole; any issue rejects it whole.
 */
function responseIssues(response: unknown, request: InterceptRequestContext, out: Issue[]): void {
  interceptResponse(response, '', out);
  if (!isJsonObject(response)) return;
  if ('id' in response && response.id !== request.id) {
    issue(
      out,
      '/id',
      'rpc.id-mismatch',
      `response id ${JSON.stringify(response.id)} does not answer request ${JSON.stringify(request.id)}`,
    );
  }
  const event = request.params.event as unknown as JsonObject;
  if (request.id !== event.id) {
    issue(
      out,
      '/id',
      'rpc.request-id-mismatch',
      `the request id ${JSON.stringify(request.id)} differs from its event id ${JSON.stringify(event.id)}`,
    );
  }
  const capabilities = request.params.capabilities;
  const advertised = advertisedEffects(capabilities);
  const entry = catalogueEntry(String(event.type));
  const effects =
    isJsonObject(response.result) && Array.isArray(response.result.effects) ? response.result.effects : [];
  effects.forEach((effect, index) => {
    const pointer = `/result/effects/${index}`;
    if (!isJsonObject(effect) || typeof effect.type !== 'string') return;
    if (!advertised.includes(effect.type)) {
      issue(
        out,
        at(pointer, 'type'),
        'effect.not-advertised',
        `effect ${JSON.stringify(effect.type)} was not advertised for this request`,
      );
      return;
    }
    if (!entry || !(entry.effects as readonly string[]).includes(effect.type)) {
      issue(
        out,
        at(pointer, 'type'),
        'effect.out-of-bounds',
        `effect ${JSON.stringify(effect.type)} is not supported at ${String(event.type)}`,
      );
      return;
    }
    if (effect.type === 'modify') checkModify(effect, event, capabilities, pointer, out);
    else if (effect.type === 'flow') checkFlow(effect, capabilities, pointer, out);
    else if (effect.type === 'inject') checkInject(effect, capabilities, pointer, out);
  });
}

export function validateInterceptResponse(response: unknown, request: InterceptRequestContext): Issue[] {
  return collect((out) => responseIssues(response, request, out));
}
