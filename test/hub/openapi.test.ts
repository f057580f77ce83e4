/** The OpenAPI document and the server's route table describe the same API. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ROUTES } from '../../src/hub/server/routes.js';

interface Operation {
  operationId: string;
  security?: unknown[];
  responses: Record<string, unknown>;
}

const doc = JSON.parse(readFileSync('docs/hub-openapi.json', 'utf8')) as {
  openapi: string;
  paths: Record<string, Record<string, Operation | unknown>>;
};

function documented(): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item))
      if (['get', 'put', 'post', 'delete', 'patch'].includes(method))
        out.set(`${method.toUpperCase()} ${path}`, op as Operation);
  return out;
}

describe('docs/hub-openapi.json', () => {
  it('is OpenAPI 3.1 and lists exactly the routes the server dispatches', () => {
    assert.equal(doc.openapi, '3.1.0');
    const served = ROUTES.map((r) => `${r.method} ${r.path.replace('*}', '}')}`).sort();
    assert.deepEqual([...documented().keys()].sort(), served);
  });

  it('names each operation as the route table does, and marks exactly the signed ones as secured', () => {
    const ops = documented();
    for (const route of ROUTES) {
      const op = ops.get(`${route.method} ${route.path.replace('*}', '}')}`)!;
      assert.equal(op.operationId, route.operationId);
      assert.equal(Array.isArray(op.security) && op.security.length > 0, route.signed, route.operationId);
      if (route.signed)
        for (const status of ['401', '403', '409', '422'])
          assert.ok(op.responses[status], `${route.operationId} ${status}`);
    }
  });
});
