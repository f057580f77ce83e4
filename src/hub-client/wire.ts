/**
 * What the hub and its clients agree on, in one place: the transparency-log entry, the chain-head
 * statement the recorder sends while a session runs, media types and the signed-request profile.
 * The server imports these; so do `tally push`, `tally hub …`, `tally verify --hub` and the
 * recorder's witness sender.
 */
import { canonicalize } from '../core/canonical.js';
import { digest } from '../core/hash.js';

export const TLOG_ENTRY_TYPE = 'tally/tlog-entry/v1';
export const CHAIN_HEAD_TYPE = 'tally/chain-head/v1';
export const HEAD_PAYLOAD_TYPE = 'application/vnd.tally.head+json';
export const PACKAGE_MEDIA_TYPE = 'application/vnd.tally.package';
export const CERTIFICATE_MEDIA_TYPE = 'application/vnd.tally.certificate+json';

/** The components every signed write covers (RFC 9421), besides the created and nonce parameters. */
export const SIGNED_COMPONENTS = ['@method', '@target-uri', '@authority', 'content-digest'] as const;

/**
 * Header fields that change what an upload means (which certificate its receipts are listed
 * under): covered by the signature whenever they are sent, so that no one between the ship and the
 * hub can add, change or strip one under a valid signature.
 */
export const SIGNED_WHEN_SENT = ['tally-certificate', 'tally-certificate-url'] as const;

/** The components a write with these header fields signs: the fixed ones and each of SIGNED_WHEN_SENT sent. */
export function signedComponents(header: (name: string) => string | undefined): string[] {
  return [...SIGNED_COMPONENTS, ...SIGNED_WHEN_SENT.filter((name) => header(name) !== undefined)];
}

export type LogEntryKind = 'package' | 'certificate' | 'head';

export interface LogEntry {
  kind: LogEntryKind;
  ship_id: string;
  /** Package and head: the session id. Certificate: its serial. */
  id: string;
  /** `sha256:` of the package bytes, of the certificate envelope's canonical JSON, or of the head envelope's. */
  digest: string;
}

/** The bytes of a log entry: canonical JSON, so anyone holding the artifact can rebuild them. */
export function logEntryBytes(entry: LogEntry): Buffer {
  return Buffer.from(
    canonicalize({
      type: TLOG_ENTRY_TYPE,
      kind: entry.kind,
      ship_id: entry.ship_id,
      id: entry.id,
      digest: entry.digest,
    }),
    'utf8',
  );
}

/** The entry a package upload puts in the log. */
export function packageLogEntry(shipId: string, session: string, packageBytes: Uint8Array): LogEntry {
  return { kind: 'package', ship_id: shipId, id: session, digest: digest(packageBytes) };
}

/** The signed statement of a running session's chain head. */
export interface ChainHeadStatement {
  type: typeof CHAIN_HEAD_TYPE;
  session: string;
  seq: number;
  /** `sha256:` of the record at `seq` (its canonical payload), as the next record's `prev`. */
  digest: string;
  /** RFC 3339 UTC. */
  time: string;
}

/** The JSON error body of every refusal. */
export interface HubErrorBody {
  error: { code: string; message: string; check?: string; detail?: unknown };
}
