/**
 * The parsed, normalised form of an AHP portable registration document. `parseRegistration`
 * (./registration.ts) produces these; the dispatcher and the transports consume them and never
 * look at the raw JSON again. Every value here has already been validated.
 */

/** The only protocol snapshot Tally reads and speaks. Matching is exact string equality. */
export const SUPPORTED_PROTOCOL_VERSION = 'draft';

/** One problem (or warning) found in a registration document. */
export interface Issue {
  /** RFC 6901 JSON pointer into the document ('' is the whole document). */
  pointer: string;
  /** Stable rule id, e.g. 'backend.id.reverse-dns'; listed in docs/ahp-registration.md. */
  rule: string;
  message: string;
}

/** An exact catalogue event name, a whole-family wildcard such as 'tool.*', or '*'. */
export type EventSelector = string;

export type ContentDisposition = 'body' | 'metadata' | 'omit';

/**
 * Content selection of one subscription. The document's flat object `{"default": ..., "text": ...}`
 * is split here into the required `default` and the explicitly named categories; a category not
 * listed uses `default`.
 */
export interface ContentSelection {
  default: ContentDisposition;
  categories: Record<string, ContentDisposition>;
}

/** An OAuth client preset (registration.schema.json `$defs/authentication`, second branch). */
export interface OAuthPreset {
  type: 'oauth';
  resource: string;
  /** https URL of the authorization server. */
  issuer: string;
  clientId: string;
  clientSecretRef?: string;
  flow: 'authorization_code_pkce' | 'client_credentials';
  scopes: string[];
}

/**
 * An explicit endpoint identity binding. Only references to credentials, never credentials:
 * `tokenEnv` names an environment variable, `tokenRef` a deployment secret reference.
 */
export type Authentication =
  | { type: 'bearer'; tokenEnv: string }
  | { type: 'bearer'; tokenRef: string }
  | OAuthPreset;

/** Out-of-band upload endpoint for non-text attachments; authenticated independently. */
export interface UploadBinding {
  /** https URL, or http only to a loopback host. */
  endpoint: string;
  /** Required by the spec: positive integer. */
  timeoutMs: number;
  /** Required by the spec: non-negative integer; a transfer bound, never permission to truncate. */
  maxBytes: number;
  /** Absent: OAuth protected-resource discovery on the endpoint; event credentials are never inherited. */
  auth?: Authentication;
}

export interface Subscription {
  /** Position in the backend's `subscriptions` array. */
  index: number;
  /** Harness-local subscription id (never wire identity), when the document gives one. */
  id?: string;
  events: EventSelector[];
  mode: 'intercept' | 'observe';
  /** Present exactly when mode is 'intercept'. */
  timeoutMs?: number;
  /** Present exactly when mode is 'intercept'. */
  failurePolicy?: 'fail-open' | 'fail-closed';
  content: ContentSelection;
  /** Defaults to false. */
  includeNative: boolean;
  upload?: UploadBinding;
  /** Optimisation hints only; never a reason to drop an event of an unknown kind. */
  filters?: { toolKinds?: string[]; paths?: string[] };
  scope?: 'managed' | 'project' | 'user';
  disableable?: boolean;
}

export type TransportConfig =
  | {
      kind: 'stdio';
      command: string;
      args: string[];
      lifecycle: 'persistent' | 'per_event';
      cwd?: string;
      /** Literal environment variables for the backend process (empty when absent). */
      env: Record<string, string>;
    }
  | { kind: 'http'; url: string };

export interface Backend {
  /** Position in the document's `hooks` array, which is the dispatch order. */
  index: number;
  /** Reverse-DNS id, unique within the document. */
  id: string;
  transport: TransportConfig;
  /** Only on HTTP transports. */
  authentication?: Authentication;
  subscriptions: Subscription[];
}

export interface Registration {
  protocolVersion: typeof SUPPORTED_PROTOCOL_VERSION;
  /** In registration (= dispatch) order. */
  hooks: Backend[];
}
