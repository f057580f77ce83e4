/**
 * Admission: whether Tally, as the harness, can honour a valid registration here and now. A
 * registration can be well-formed (./registration.ts) and still ask for what this harness cannot
 * enforce in its context; admission refuses it whole, naming each pointer, instead of running a
 * weaker version of it. The official interop catalogue's registration rows are the oracle.
 *
 * Refused:
 * - an event a subscription names exactly that this harness does not deliver in that mode
 *   (`hook.failure` is delivered only when the dispatcher emits it: `hookFailures`);
 * - a `scope` the harness cannot enforce (its manifest's `managedPolicy.scopes`; `managed` needs an
 *   administrator-installed harness), and `disableable: false` where hooks can be disabled;
 * - a bearer `tokenEnv` (of a backend or an upload) that is unset or empty in the environment;
 * - a backend `url` over plain `http` to a host that is not loopback, which the transports refuse
 *   unless `allowInsecureHttp` (validation only warns about it);
 * - a deployment requirement (`{event, mode, effects, modify}`) that the harness cannot advertise
 *   at that event: an effect outside the event's bounds, a modify target or operation it lacks,
 *   or `ask` where no user can answer a prompt (`interactive: false`).
 */
import { pointerToken } from '../../core/json.js';
import { MAX_TIMEOUT_MS, requestCapabilities } from '../protocol/capabilities.js';
import { catalogueEntry } from '../protocol/catalogue.js';
import { isLoopbackHost } from '../transports/http-exchange.js';
import type { Authentication, Issue, Registration } from './types.js';

/** What a deployment insists a registration be able to do at one boundary. */
export interface AdmissionRequirement {
  event: string;
  mode: 'intercept' | 'observe';
  effects?: string[];
  modify?: Record<string, { replace?: boolean; merge?: boolean }>;
}

export interface AdmissionContext {
  /** Where `tokenEnv` credentials are looked up. */
  env: NodeJS.ProcessEnv;
  /** A user can answer a prompt, so `ask` is enforceable. Default false. */
  interactive?: boolean;
  /** The dispatcher emits `hook.failure` events. Default false. */
  hookFailures?: boolean;
  /** Scopes this installation can enforce. Default ['user', 'project'] (no managed install). */
  scopes?: readonly ('user' | 'project' | 'managed')[];
  /** Whether users can disable hooks here. Default true. */
  disableable?: boolean;
  /** The transports are allowed plain http to hosts other than loopback (tests only). Default false. */
  allowInsecureHttp?: boolean;
  requirements?: readonly AdmissionRequirement[];
  /**
   * A missing credential fails only its backend, by its failure policy, at dispatch (a note)
   * instead of refusing the registration (an issue). Default false: `validate --admit` refuses.
   */
  deferCredentials?: boolean;
}

export interface Admission {
  accepted: boolean;
  issues: Issue[];
  /**
   * What the harness will do differently from the letter of the registration without refusing it:
   * a deadline clamped to the longest timer (`admission.timeout-clamped`), and, with
   * `deferCredentials`, a missing credential that fails its backend by its failure policy.
   */
  notes: Issue[];
}

function checkCredential(
  auth: Authentication | undefined,
  env: NodeJS.ProcessEnv,
  pointer: string,
  out: Issue[],
) {
  if (auth?.type !== 'bearer' || !('tokenEnv' in auth)) return;
  const value = env[auth.tokenEnv];
  if (value === undefined || value === '') {
    out.push({
      pointer: `${pointer}/tokenEnv`,
      rule: 'admission.credential-missing',
      message: `the environment variable named by tokenEnv is not set (or empty); the credential cannot be resolved`,
    });
  }
}

function checkPlainHttp(raw: string, pointer: string, context: AdmissionContext, out: Issue[]) {
  if (context.allowInsecureHttp) return;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return; // validation already refused it
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    out.push({
      pointer,
      rule: 'admission.insecure-http',
      message: 'plain http to a host that is not loopback is refused by the transports; use https',
    });
  }
}

function checkRequirement(req: AdmissionRequirement, index: number, context: AdmissionContext, out: Issue[]) {
  const pointer = `/requirements/${index}`;
  const entry = catalogueEntry(req.event);
  if (!entry || (req.mode === 'intercept' && !entry.interceptable)) {
    out.push({
      pointer: `${pointer}/event`,
      rule: 'admission.requirement-event',
      message: `${req.event} cannot be delivered with ${req.mode === 'intercept' ? 'hooks/intercept' : 'hooks/observe'} here`,
    });
    return;
  }
  if (req.mode === 'observe') return;
  const caps = requestCapabilities(req.event);
  for (const [i, effect] of (req.effects ?? []).entries()) {
    const enforceable =
      caps?.effects.includes(effect) === true && (effect !== 'ask' || context.interactive === true);
    if (!enforceable) {
      out.push({
        pointer: `${pointer}/effects/${i}`,
        rule: 'admission.requirement-effect',
        message:
          effect === 'ask'
            ? 'ask cannot be enforced: no user can answer a prompt in this context'
            : `${effect} cannot be enforced at ${req.event}`,
      });
    }
  }
  for (const [target, ops] of Object.entries(req.modify ?? {})) {
    const offered = caps?.modify?.[target];
    const missing = (['replace', 'merge'] as const).filter(
      (op) => ops[op] === true && offered?.[op] !== true,
    );
    if (!offered || missing.length > 0) {
      out.push({
        pointer: `${pointer}/modify/${pointerToken(target)}`,
        rule: 'admission.requirement-modify',
        message: offered
          ? `modify ${target} cannot ${missing.join(' or ')} at ${req.event}`
          : `${target} is not a modify target at ${req.event}`,
      });
    }
  }
}

/** Decides whether this harness can honour `registration` (already valid) in `context`. */
export function admitRegistration(registration: Registration, context: AdmissionContext): Admission {
  const out: Issue[] = [];
  const notes: Issue[] = [];
  const credentials = context.deferCredentials ? notes : out;
  const scopes = context.scopes ?? ['user', 'project'];
  const disableable = context.disableable ?? true;
  for (const backend of registration.hooks) {
    const at = `/hooks/${backend.index}`;
    checkCredential(backend.authentication, context.env, `${at}/authentication`, credentials);
    if (backend.transport.kind === 'http')
      checkPlainHttp(backend.transport.url, `${at}/transport/url`, context, out);
    for (const sub of backend.subscriptions) {
      const sp = `${at}/subscriptions/${sub.index}`;
      sub.events.forEach((name, i) => {
        if (name === 'hook.failure' && !context.hookFailures) {
          out.push({
            pointer: `${sp}/events/${i}`,
            rule: 'admission.event-unsupported',
            message: 'hook.failure is not delivered here: this harness does not emit it',
          });
        }
      });
      if (sub.scope !== undefined && !scopes.includes(sub.scope)) {
        out.push({
          pointer: `${sp}/scope`,
          rule: 'admission.scope',
          message: `scope '${sub.scope}' cannot be enforced here (this installation enforces ${scopes.join(', ')})`,
        });
      }
      if (sub.disableable === false && disableable) {
        out.push({
          pointer: `${sp}/disableable`,
          rule: 'admission.disableable',
          message: 'hooks can be disabled by the user here, so disableable: false cannot be honoured',
        });
      }
      // (An upload endpoint over plain http to another host is already invalid.)
      if (sub.upload) checkCredential(sub.upload.auth, context.env, `${sp}/upload/auth`, credentials);
      for (const [field, value] of [
        ['timeoutMs', sub.timeoutMs],
        ['upload/timeoutMs', sub.upload?.timeoutMs],
      ] as const) {
        if (value !== undefined && value > MAX_TIMEOUT_MS)
          notes.push({
            pointer: `${sp}/${field}`,
            rule: 'admission.timeout-clamped',
            message: `a deadline of ${value} ms is longer than a timer can hold; it is applied as ${MAX_TIMEOUT_MS} ms`,
          });
      }
    }
  }
  (context.requirements ?? []).forEach((req, i) => {
    checkRequirement(req, i, context, out);
  });
  return { accepted: out.length === 0, issues: out, notes };
}
