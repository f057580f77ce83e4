/**
 * The harness wiring, in one place: a registration admitted here, a dispatcher whose transports
 * get the secret provider, the environment, local OAuth clients and a logger, the uploaders of
 * attachments, and backends that run inside this process. Every caller that dispatches (the CLI,
 * the boundary, the recorder) builds it here, so none of them wires transports itself.
 */
import { TallyError } from '../../core/errors.js';
import type { CanonicalEvent } from '../../core/event.js';
import { eventCapabilities } from '../protocol/capabilities.js';
import { admitRegistration } from '../registration/admission.js';
import type { Backend, Issue, Registration } from '../registration/types.js';
import { createTransport } from '../transports/index.js';
import { type MemoryHandler, memoryTransport } from '../transports/memory.js';
import type { Logger, OAuthClientPolicy } from '../transports/options.js';
import { fileSecretProvider } from '../transports/secrets.js';
import { Uploader } from '../transports/upload.js';
import { Dispatcher } from './dispatcher.js';
import type { DispatchInput, DispatchOutcome, SubscriptionReport } from './types.js';

export interface HarnessOptions {
  /** Where `tokenEnv` credentials are read from, and the base environment of stdio backends. */
  env: NodeJS.ProcessEnv;
  /** Local OAuth clients for endpoints that challenge without an authentication binding. */
  oauthClients?: OAuthClientPolicy;
  /** Diagnostics: backend stderr, restarts, failures. Never a credential. */
  logger?: Logger;
  /**
   * A backend that runs inside this process answers through this handler (a memory transport);
   * `{handler, shared: true}` for the harness's own code, given messages by reference.
   */
  inProcess?: (backend: Backend) => MemoryHandler | InProcessBackend | undefined;
  /** Deliver `hook.failure` observations after a failed intercept. Default false. */
  hookFailures?: boolean;
  /** A user can answer a prompt here. Default false. */
  interactive?: boolean;
}

/** A backend of the harness's own code, handed messages by reference (see transports/memory). */
export interface InProcessBackend {
  handler: MemoryHandler;
  shared: true;
}

export class HarnessError extends TallyError<'refused'> {}

export interface Harness {
  readonly registration: Registration;
  /**
   * What runs differently from the registration's letter without refusing it: a clamped deadline,
   * a backend whose credential is missing (it fails by its failure policy at each call).
   */
  readonly notes: readonly Issue[];
  dispatch(input: DispatchInput): Promise<DispatchOutcome>;
  /** Tells the observers of an event that already happened (best effort). */
  notify(event: CanonicalEvent): Promise<SubscriptionReport[]>;
  /** Ends pending observer deliveries and every backend connection. */
  close(): Promise<void>;
}

/** Admits `registration` here and opens its dispatcher; throws HarnessError('refused') with the issues. */
export function createHarness(registration: Registration, options: HarnessOptions): Harness {
  const admission = admitRegistration(registration, {
    env: options.env,
    deferCredentials: true,
    ...(options.hookFailures ? { hookFailures: true } : {}),
    ...(options.interactive ? { interactive: true } : {}),
  });
  if (!admission.accepted) {
    const first = admission.issues[0]!;
    const more = admission.issues.length > 1 ? ` (and ${admission.issues.length - 1} more)` : '';
    throw new HarnessError(
      'refused',
      `this harness cannot honour the registration here: ${first.pointer}: ${first.message} [${first.rule}]${more}`,
      { issues: admission.issues },
    );
  }
  const secrets = fileSecretProvider(options.env);
  const dispatcher = new Dispatcher({
    registration,
    transportFactory: (backend) => {
      const own = options.inProcess?.(backend);
      if (typeof own === 'function') return memoryTransport(own);
      if (own !== undefined) return memoryTransport(own.handler, { shared: true });
      return createTransport(backend, {
        secrets,
        env: options.env,
        ...(options.oauthClients ? { oauthClients: options.oauthClients } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      });
    },
    capabilitiesFor: (_type, event) => eventCapabilities(event),
    uploaderFor: (binding, pointer) =>
      new Uploader(binding, {
        secrets,
        env: options.env,
        pointer,
        ...(options.oauthClients ? { oauthClients: options.oauthClients } : {}),
      }),
    ...(options.hookFailures ? { hookFailures: true } : {}),
  });
  return {
    registration,
    notes: admission.notes,
    dispatch: (input) => dispatcher.dispatch(input),
    notify: (event) => dispatcher.notify(event),
    close: () => dispatcher.close(),
  };
}
