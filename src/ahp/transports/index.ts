/**
 * Builds the transport for one registered backend. Each call makes a fresh transport with its own
 * process or keep-alive agent and its own endpoint authentication, so nothing (a process, a socket
 * or a credential) is shared between backends.
 */
import { EndpointAuth } from '../auth.js';
import type { Backend } from '../registration-types.js';
import type { BackendTransport } from '../transport.js';
import { HttpTransport } from './http.js';
import { checkEndpoint } from './http-exchange.js';
import type { TransportOptions } from './options.js';
import { PersistentStdioTransport } from './stdio.js';
import { PerEventStdioTransport } from './stdio-per-event.js';
import { backendEnvironment } from './stdio-process.js';

export type { Logger, LogLevel, OAuthClientChoice, OAuthClientPolicy, TransportOptions } from './options.js';
export { silentLogger } from './options.js';

export function createTransport(backend: Backend, options: TransportOptions): BackendTransport {
  const transport = backend.transport;
  if (transport.kind === 'stdio') {
    const spec = {
      backendId: backend.id,
      command: transport.command,
      args: transport.args,
      cwd: transport.cwd,
      env: backendEnvironment(transport.env, options.env),
      logger: options.logger,
      maxBodyBytes: options.maxBodyBytes,
      killGraceMs: options.killGraceMs,
    };
    return transport.lifecycle === 'persistent'
      ? new PersistentStdioTransport(spec)
      : new PerEventStdioTransport(spec);
  }
  const url = checkEndpoint(transport.url, options.allowInsecureHttp);
  const auth = new EndpointAuth(url, backend.authentication, {
    secrets: options.secrets,
    env: options.env,
    oauthClients: options.oauthClients,
    allowInsecureHttp: options.allowInsecureHttp,
  });
  return new HttpTransport({
    backendId: backend.id,
    url: transport.url,
    auth,
    logger: options.logger,
    maxBodyBytes: options.maxBodyBytes,
    allowInsecureHttp: options.allowInsecureHttp,
  });
}
