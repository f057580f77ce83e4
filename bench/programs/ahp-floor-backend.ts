/**
 * The "required work" floor of one stdio intercept, backend side: what every conforming AHP
 * backend must do with one request and nothing else — read the line strictly (duplicate keys,
 * lone surrogates), validate the request, answer with no effects, validate the answer, write it.
 * No transport framing beyond one line per chunk, no handler, no deadline. The harness side of the
 * same floor is `requiredRoundTrip` in ../ahp-transport-series.ts.
 */
import {
  type InterceptRequestContext,
  validateInterceptResponse,
  validateMessage,
} from '../../src/ahp/messages/index.js';
import { parseJson } from '../../src/core/json-parse.js';

process.stdin.on('data', (chunk: Buffer) => {
  const request = parseJson(chunk.subarray(0, chunk.length - 1)) as InterceptRequestContext;
  if (validateMessage(request, 'intercept-request').length > 0) throw new Error('invalid request');
  const answer = { jsonrpc: '2.0', id: request.id, result: { protocolVersion: 'draft', effects: [] } };
  if (validateInterceptResponse(answer, request).length > 0) throw new Error('invalid answer');
  process.stdout.write(`${JSON.stringify(answer)}\n`);
});
