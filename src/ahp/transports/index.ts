/**
 * Builds the transport for one registered backend. Each call makes a fresh transport with its own
 * process or keep-alive agent and its own endpoint authentication, so nothing (a process, a socket
 * or a credential) is shared between backends. The backend's `index` locates it in the
 * registration, so a configuration error (an unusable env entry, a refused URL, an unset token
 * variable) carries the full JSON pointer of the field at fault, e.g. `/hooks/0/transport/url`.
 */

import { pointerTo } from '../registration/check.js';
import type { Backend } from '../registration/types.js';
import { EndpointAuth } from './auth.js';
import { HttpTransport } from './http.js';
import { checkEndpoint } from './http-exchange.js';
import type { TransportOptions } from './options.js';
import { PersistentStdioTransport } from './stdio.js';
import { PerEventStdioTransport } from './stdio-per-event.js';
import { backendEnvironment } from './stdio-process.js';
import type { BackendTransport } from './transport.js';

export type { Logger, LogLevel, OAuthClientChoice, OAuthClientPolicy, TransportOptions } from './options.js';
export { silentLogger } from './options.js';

export function createTransport(backend: Backend, options: TransportOptions): BackendTransport {
  const transport = backend.transport;
  const at = pointerTo('/hooks', backend.index);
  const transportPointer = pointerTo(at, 'transport');
  if (transport.kind === 'stdio') {
    const spec = {
      backendId: backend.id,
      command: transport.command,
      args: transport.args,
      cwd: transport.cwd,
      env: backendEnvironment(transport.env, options.env, transportPointer),
      pointer: transportPointer,
      logger: options.logger,
      maxBodyBytes: options.maxBodyBytes,
      killGraceMs: options.killGraceMs,
    };
    return transport.lifecycle === 'persistent'
      ? new PersistentStdioTransport(spec)
      : new PerEventStdioTransport(spec);
  }
  const urlPointer = pointerTo(transportPointer, 'url');
  const url = checkEndpoint(transport.url, options.allowInsecureHttp, { pointer: urlPointer });
  const auth = new EndpointAuth(url, backend.authentication, {
    secrets: options.secrets,
    env: options.env,
    oauthClients: options.oauthClients,
    allowInsecureHttp: options.allowInsecureHttp,
    ...(backend.authentication !== undefined ? { pointer: pointerTo(at, 'authentication') } : {}),
  });
  return new HttpTransport({
    backendId: backend.id,
    url: transport.url,
    pointer: urlPointer,
    auth,
    logger: options.logger,
    maxBodyBytes: options.maxBodyBytes,
    allowInsecureHttp: options.allowInsecureHttp,
  });
}
