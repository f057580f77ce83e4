/**
 * The hub's route table: the one list the server dispatches from and the OpenAPI document is
 * checked against (test/hub/openapi.test.ts). `{name}` matches one path segment, `{name*}` the
 * rest of the path. Writes are `signed` (RFC 9421); everything else is public.
 */
import type { Handler } from './context.js';
import * as artifacts from './handlers/artifacts.js';
import * as identity from './handlers/identity.js';
import * as log from './handlers/log.js';
import * as pages from './handlers/pages.js';

export interface Route {
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  operationId: string;
  signed: boolean;
  handler: Handler;
}

export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v1/hub', operationId: 'getHub', signed: false, handler: identity.hubInfo },
  { method: 'GET', path: '/v1/ships', operationId: 'listShips', signed: false, handler: identity.listShips },
  {
    method: 'GET',
    path: '/v1/ships/{ship_id}',
    operationId: 'getShip',
    signed: false,
    handler: identity.getShip,
  },
  {
    method: 'PUT',
    path: '/v1/ships/{ship_id}',
    operationId: 'registerShip',
    signed: true,
    handler: identity.registerShip,
  },
  {
    method: 'GET',
    path: '/v1/agents',
    operationId: 'listAgents',
    signed: false,
    handler: identity.listAgents,
  },
  {
    method: 'GET',
    path: '/v1/agents/{slug}',
    operationId: 'getAgent',
    signed: false,
    handler: identity.getAgent,
  },
  {
    method: 'GET',
    path: '/v1/certificates',
    operationId: 'listCertificates',
    signed: false,
    handler: artifacts.listCertificates,
  },
  {
    method: 'POST',
    path: '/v1/certificates',
    operationId: 'publishCertificate',
    signed: true,
    handler: artifacts.postCertificate,
  },
  {
    method: 'GET',
    path: '/v1/certificates/{serial}',
    operationId: 'getCertificate',
    signed: false,
    handler: artifacts.getCertificate,
  },
  {
    method: 'GET',
    path: '/v1/packages',
    operationId: 'listPackages',
    signed: false,
    handler: artifacts.listPackages,
  },
  {
    method: 'PUT',
    path: '/v1/packages/{session}',
    operationId: 'uploadPackage',
    signed: true,
    handler: artifacts.putPackage,
  },
  {
    method: 'GET',
    path: '/v1/packages/{session}',
    operationId: 'getPackage',
    signed: false,
    handler: artifacts.getPackage,
  },
  {
    method: 'GET',
    path: '/v1/packages/{session}/raw',
    operationId: 'getPackageBytes',
    signed: false,
    handler: artifacts.getPackageRaw,
  },
  {
    method: 'GET',
    path: '/v1/sessions/{session}/heads',
    operationId: 'listHeads',
    signed: false,
    handler: artifacts.listHeads,
  },
  {
    method: 'POST',
    path: '/v1/sessions/{session}/heads',
    operationId: 'witnessHead',
    signed: true,
    handler: artifacts.postHead,
  },
  {
    method: 'GET',
    path: '/v1/log/entries/{index}',
    operationId: 'getLogEntry',
    signed: false,
    handler: log.entry,
  },
  {
    method: 'GET',
    path: '/v1/log/proof/inclusion',
    operationId: 'getInclusionProof',
    signed: false,
    handler: log.inclusionProof,
  },
  {
    method: 'GET',
    path: '/v1/log/proof/consistency',
    operationId: 'getConsistencyProof',
    signed: false,
    handler: log.consistencyProof,
  },
  {
    method: 'GET',
    path: '/log/checkpoint',
    operationId: 'getCheckpoint',
    signed: false,
    handler: log.checkpoint,
  },
  { method: 'GET', path: '/log/tile/{path*}', operationId: 'getTile', signed: false, handler: log.tile },
  { method: 'GET', path: '/', operationId: 'homePage', signed: false, handler: pages.home },
  { method: 'GET', path: '/receipt/{id}', operationId: 'receiptPage', signed: false, handler: pages.receipt },
  { method: 'GET', path: '/agent/{slug}', operationId: 'agentPage', signed: false, handler: pages.agent },
  {
    method: 'GET',
    path: '/pages/verifier.js',
    operationId: 'getVerifierScript',
    signed: false,
    handler: pages.verifierJs,
  },
];

const SEGMENT = /^[A-Za-z0-9._:-]{1,200}$/;

export type Match = { route: Route; params: Record<string, string> } | { allowed: string[] } | null;

function matchPath(template: string, path: string): Record<string, string> | null {
  const want = template.split('/');
  const got = path.split('/');
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.endsWith('*}')) {
      const rest = got.slice(i).join('/');
      if (rest === '' || rest.length > 200) return null;
      params[w.slice(1, -2)] = rest;
      return params;
    }
    const g = got[i];
    if (g === undefined) return null;
    if (w.startsWith('{')) {
      const value = decodeURIComponent(g);
      if (!SEGMENT.test(value)) return null;
      params[w.slice(1, -1)] = value;
    } else if (w !== g) return null;
  }
  return got.length === want.length ? params : null;
}

/** The route for a request, or the methods the path allows (405), or null (404). */
export function matchRoute(method: string, path: string): Match {
  const allowed: string[] = [];
  for (const route of ROUTES) {
    let params: Record<string, string> | null;
    try {
      params = matchPath(route.path, path);
    } catch {
      params = null;
    }
    if (!params) continue;
    if (route.method === method) return { route, params };
    allowed.push(route.method);
  }
  return allowed.length ? { allowed } : null;
}
