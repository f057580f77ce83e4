/**
 * The hub's client side (`tally/hub-client`): what `tally push`, `tally hub ls|audit`,
 * `tally verify --hub` and the recorder's witness share with the hub — wire formats, signed
 * requests, push, the witness sender, the hub checks and the audit.
 */
export { type AuditResult, auditDir, auditHub, recordedHubKey } from './audit.js';
export { fetchCheckpoint, openCheckpoint, type VerifiedCheckpoint } from './checkpoint.js';
export {
  HubClientError,
  type HubClientErrorCode,
  hubJson,
  hubRequest,
  hubUrl,
  type ShipKey,
} from './http.js';
export { pushCertificate, pushPackage, registerShip } from './push.js';
export {
  type HubCheckOptions,
  type HubInclusionCheck,
  hubChecks,
  hubInclusion,
  hubWitnessConsistency,
} from './verify-hub.js';
export {
  CHAIN_HEAD_TYPE,
  type ChainHeadStatement,
  HEAD_PAYLOAD_TYPE,
  type LogEntry,
  logEntryBytes,
  packageLogEntry,
  TLOG_ENTRY_TYPE,
} from './wire.js';
export { createWitness, sendChainHead, signChainHead, type Witness } from './witness.js';
export {
  servedHeadsConsistency,
  type WitnessCheck,
  type WitnessedHead,
  witnessConsistency,
} from './witness-check.js';
