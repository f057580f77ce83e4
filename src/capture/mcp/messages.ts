/**
 * The JSON-RPC pieces both gateways (stdio and HTTP) read and write: ids as map keys, the reading of
 * a `tools/call` request, protocol errors, and the tool result a denied call gets.
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';

/** The map key of a JSON-RPC id; undefined for anything that is not a valid id. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s${id}`;
  if (typeof id === 'number' && Number.isFinite(id)) return `n${id}`;
  return undefined;
}

export function line(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`);
}

/** A JSON-RPC error response (protocol errors: malformed requests). */
export function protocolError(id: unknown, code: number, message: string): Buffer {
  return line({ jsonrpc: '2.0', id: idKey(id) === undefined ? null : id, error: { code, message } });
}

/** A `tools/call` request's tool and arguments, or the protocol error a malformed one gets. */
export function readCall(
  message: JsonObject,
): { toolName: string; input: JsonObject } | { error: [code: number, message: string] } {
  if (idKey(message.id) === undefined)
    return { error: [-32600, 'invalid request: id must be a string or a number'] };
  const params = message.params;
  if (!isJsonObject(params) || typeof params.name !== 'string' || params.name === '')
    return { error: [-32602, 'invalid params: tools/call needs params.name, a non-empty string'] };
  if (params.arguments !== undefined && !isJsonObject(params.arguments))
    return { error: [-32602, 'invalid params: params.arguments must be an object'] };
  return { toolName: params.name, input: params.arguments ?? {} };
}

/** The answer to a denied call: a tool result the model reads, not a protocol error. */
export function deniedResult(id: unknown, reason: string): Buffer {
  return line({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: reason }], isError: true } });
}
