/**
 * What every transport needs from its surroundings: where secrets come from, the environment that
 * `tokenEnv` names are read from, a logger for diagnostics (backend stderr, restarts), and limits.
 */
import type { SecretProvider } from './secrets.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Diagnostics sink. Fields are plain facts (backend id, status, pid); never a credential. */
export type Logger = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

export const silentLogger: Logger = () => {};

/**
 * Local trust policy for OAuth when an endpoint challenges and no explicit binding is configured:
 * given the authorization servers an endpoint names, return the client identity to use with one of
 * them, or undefined to refuse. The server never selects the client's identity; this does.
 */
export type OAuthClientPolicy = (
  resource: string,
  authorizationServers: readonly string[],
) => OAuthClientChoice | undefined;

export interface OAuthClientChoice {
  issuer: string;
  clientId: string;
  clientSecretRef: string;
  scopes?: string[];
}

export interface TransportOptions {
  /** Resolves `tokenRef` / `clientSecretRef` names. */
  secrets: SecretProvider;
  /** Environment that `tokenEnv` names are read from, and the base of a stdio backend's environment. */
  env: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Largest response body (HTTP) or line (stdio) accepted, in bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** OAuth client selection when an endpoint challenges without an explicit binding. */
  oauthClients?: OAuthClientPolicy;
  /**
   * Grace before each step of stopping a stdio backend (stdin closed, then SIGTERM, then SIGKILL).
   * Default 2000 ms.
   */
  killGraceMs?: number;
  /** Allow plain http to a non-loopback host (an explicitly controlled local network). Default false. */
  allowInsecureHttp?: boolean;
}

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
