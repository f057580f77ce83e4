/**
 * The public shapes of the AHP dispatcher (./dispatcher.ts): its options, one dispatch's input,
 * the settled outcome with one report per subscription reached, and its error.
 */
import { TallyError } from '../../core/errors.js';
import type { CanonicalEvent } from '../../core/event.js';
import type { Backend, Registration, UploadBinding } from '../registration/types.js';
import type { BackendTransport } from '../transports/transport.js';
import type { AttachmentBytes, AttachmentUploader } from './attachments.js';
import type {
  Denial,
  HostCheck,
  InterceptCapabilities,
  InterceptState,
  Permission,
  Settlement,
} from './compose.js';

export type TransportFactory = (backend: Backend) => BackendTransport;

export interface DispatcherOptions {
  registration: Registration;
  /** Opens the connection to one backend; called at most once per backend while the dispatcher is open. */
  transportFactory: TransportFactory;
  /** Host rules over a staged modification (the tool's own argument checks); a failure rejects the response. */
  hostCheck?: HostCheck;
  /**
   * Capabilities advertised when a dispatch names none (`tally ahp dispatch` passes
   * `eventCapabilities` from ./capabilities.ts). Without either, an event that matches an
   * interceptor is refused: advertising nothing is never a safe default.
   */
  capabilitiesFor?: (eventType: string, event: CanonicalEvent) => InterceptCapabilities | undefined;
  /** Deadline of one best-effort observe delivery. Default 5000 ms. */
  observeTimeoutMs?: number;
  /** Attempts per intercept call on a connection failure, all inside the one deadline. Default 3. */
  maxAttempts?: number;
  /** Pause between attempts. Default 25 ms (never past the deadline). */
  retryDelayMs?: number;
  /**
   * Opens the uploader of one subscription's `upload` binding (e.g. `new Uploader(binding, …)`
   * from ./upload.ts); called at most once per subscription. Without it, attachments that need an
   * upload become gaps. `pointer` is the binding's place in the registration
   * (`/hooks/N/subscriptions/M/upload`), for configuration errors (the Uploader's `pointer` option).
   */
  uploaderFor?: (binding: UploadBinding, pointer: string) => AttachmentUploader;
  /**
   * After settlement, also deliver one `hook.failure` observation per failed or rejected intercept
   * call to the subscriptions that observe `hook.failure` (the protocol allows, not requires, it).
   * Default false.
   */
  hookFailures?: boolean;
}

export interface DispatchInput {
  event: CanonicalEvent;
  /** What this boundary can enforce now; default from `capabilitiesFor`. */
  capabilities?: InterceptCapabilities;
  /** Incoming pipeline state, sent unchanged as `params.state` to every interceptor. */
  state?: InterceptState;
  /** Interruption: ends a pending request at once; later responses are ignored. */
  signal?: AbortSignal;
  /**
   * Bytes of the event's non-text attachments, by part id. A body-selected attachment part with
   * no `body` is uploaded to each subscription's upload endpoint before that subscription's
   * message is sent (./attachments.ts).
   */
  attachments?: AttachmentBytes;
}

export type SubscriptionStatus = 'accepted' | 'rejected' | 'failed' | 'observed' | 'interrupted';

export interface SubscriptionReport {
  backend: string;
  subscription: string;
  /** The method this subscription received. Uncalled interceptors get `hooks/observe`. */
  method: 'hooks/intercept' | 'hooks/observe';
  status: SubscriptionStatus;
  /** Why a call failed or a response was rejected (local audit only, never shown to the model). */
  reason?: string;
  /** For failed or rejected intercepts: the policy that settled it. */
  failurePolicy?: 'fail-open' | 'fail-closed';
  /** Set on deliveries of a derived event (`hook.failure`), not of the dispatched event itself. */
  event?: string;
  /** Intercepts: milliseconds from the call's start (uploads included) to its settling. */
  latencyMs?: number;
  /** Accepted intercepts: the effect types of the answer, in order. */
  effects?: string[];
}

export interface DispatchOutcome extends Settlement {
  /** The raw AHP permission: `none` means no backend objected and the host's own permission flow decides. */
  permission: Permission;
  /** Who denied and why; `synthetic` marks a fail-closed denial. */
  denial?: Denial;
  /** Present when the boundary was interrupted: nothing pending may run. */
  interrupted?: true;
  /** The effective event after every accepted modification (the input object itself when none changed it). */
  event: CanonicalEvent;
  subscriptions: SubscriptionReport[];
}

export type DispatchErrorCode = 'bad-event' | 'bad-capabilities' | 'no-capabilities' | 'closed';
/** A dispatch the caller asked for wrongly (bad event or advertisement) or on a closed dispatcher. */
export class DispatchError extends TallyError<DispatchErrorCode> {}
