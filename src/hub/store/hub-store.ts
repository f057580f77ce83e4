/**
 * HubStore: everything the hub keeps, behind one interface with two implementations (SQLite, the
 * embedded default, and PostgreSQL for stateless replicas). Every write that the transparency
 * log must witness is one atomic call: the claim on the id, the rows and the log entry commit
 * together or not at all. Nonces and rate-limit counters live here too, so they hold across
 * replicas.
 */
import { TallyError } from '../../core/errors.js';
import type { LogEntry } from '../../hub-client/wire.js';

export type HubStoreErrorCode = 'unavailable' | 'migration' | 'wrong-hub' | 'not-found' | 'log';

export class HubStoreError extends TallyError<HubStoreErrorCode> {}

export interface ShipRow {
  ship_id: string;
  key_id: string;
  /** Raw 32-byte Ed25519 key, base64. */
  public_key: string;
  registered_at: number;
}

export interface CertificateRow {
  serial: string;
  ship_id: string;
  agent: string;
  digest: string;
  /** The envelope's canonical JSON. */
  envelope: string;
  issued_at: number;
  valid_from: number;
  valid_until: number;
  received_at: number;
  log_index: number;
}

export interface PackageRow {
  session: string;
  ship_id: string;
  agent: string | null;
  certificate: string | null;
  digest: string;
  size: number;
  record_count: number;
  merkle_root: string;
  started_at: number | null;
  ended_at: number | null;
  received_at: number;
  log_index: number;
  /** The verification checks as JSON (the verifier's own result list). */
  checks: string;
}

export interface HeadRow {
  session: string;
  seq: number;
  record_digest: string;
  /** `sha256:` of the head envelope's canonical JSON: the log entry's digest. */
  digest: string;
  ship_id: string;
  time: number;
  envelope: string;
  received_at: number;
  log_index: number;
}

export interface AgentRow {
  slug: string;
  ship_id: string;
  first_seen: number;
}

/**
 * Where a list ordered by a time resumes: the last item's time and id. Rows may share a
 * millisecond, so the id breaks the tie and no row is skipped at a page boundary.
 */
export interface TimeCursor {
  /** Epoch ms. */
  time: number;
  id: string;
}

/** `C` is the cursor: a log index (unique) for certificates and packages, a TimeCursor otherwise. */
export interface ListQuery<C = number> {
  agent?: string;
  ship?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  limit: number;
  /** Return the items after this one, newest first (the `next` of the previous page). */
  before?: C;
}

export interface Page<T, C = number> {
  items: T[];
  /** The `before` of the next page, or null at the end. */
  next: C | null;
}

export type PublishStatus = 'created' | 'exists' | 'conflict' | 'forbidden';

export interface Published {
  status: PublishStatus;
  /** The log index of the stored item (new or existing). */
  log_index?: number;
  /** For forbidden: the ship that owns the id or slug. */
  owner?: string;
  /** What the refusal is about: `session`, `agent`, `serial`, `seq`. */
  subject?: string;
}

export interface LogHead {
  size: number;
  root: Buffer;
  checkpoint: string;
}

export interface StoredEntry {
  index: number;
  entry: LogEntry;
  bytes: Buffer;
}

export type Unlogged<T> = Omit<T, 'log_index'>;

export interface HubStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** Applies pending migrations, binds the database to this hub's origin and key (or refuses). */
  open(
    hub: { origin: string; publicKey: string },
    signCheckpoint: (size: number, root: Buffer) => string,
  ): Promise<void>;
  close(): Promise<void>;

  registerShip(ship: ShipRow): Promise<'created' | 'exists'>;
  ship(shipId: string): Promise<ShipRow | null>;
  /** Newest first: by registered_at, then by ship_id (descending, in byte order). */
  ships(query: ListQuery<TimeCursor>): Promise<Page<ShipRow, TimeCursor>>;

  /** Records a request nonce; false when it was already used (a replay). */
  useNonce(keyId: string, nonce: string, expiresAt: number): Promise<boolean>;
  /** Counts one hit in a fixed window for each bucket; returns each bucket's count so far in it. */
  hit(buckets: readonly string[], window: number): Promise<number[]>;

  publishCertificate(row: Unlogged<CertificateRow>): Promise<Published>;
  publishPackage(row: Unlogged<PackageRow>, bytes: Buffer): Promise<Published>;
  witnessHead(row: Unlogged<HeadRow>): Promise<Published>;

  certificate(serial: string): Promise<CertificateRow | null>;
  certificates(query: ListQuery): Promise<Page<CertificateRow>>;
  package(session: string): Promise<PackageRow | null>;
  packageBytes(session: string): Promise<Buffer | null>;
  packages(query: ListQuery): Promise<Page<PackageRow>>;
  agent(slug: string): Promise<AgentRow | null>;
  /** Newest first: by first_seen, then by slug (descending, in byte order). */
  agents(query: ListQuery<TimeCursor>): Promise<Page<AgentRow, TimeCursor>>;
  heads(session: string): Promise<HeadRow[]>;

  logHead(): Promise<LogHead>;
  /** The stored hashes of a tile (as wide as the log has filled it), empty when none. */
  tile(level: number, index: number): Promise<Buffer>;
  entries(from: number, to: number): Promise<StoredEntry[]>;
}
