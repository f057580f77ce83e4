/**
 * Tally's evidence layer (`tally/evidence`): records and the record chain, the signed log and its
 * stores, agent certificates, the policy shared by the live judge and the verifier, redaction,
 * receipts, packages and their verification.
 */

export { type Approval, ApprovalError, signApproval, verifyApproval } from './approval.js';
export {
  type AgentCertificate,
  CertificateError,
  type CertificateErrorCode,
  issueCertificate,
  parseCertificate,
  verifyCertificate,
} from './certificate.js';
export { FileRecordStore, StoreError, type TornTail } from './log/file-store.js';
export { HeadFile, HeadFileError, headFilePath, type StoredHead } from './log/head-file.js';
export { LockError } from './log/lock.js';
export { ChainVerifier, type CheckedRecord, LineTooLong, readLogLines, verifyLogFile } from './log/reader.js';
export { MemoryRecordStore, type RecordStore } from './log/store.js';
export { type Appended, LogWriter, type OpenLogOptions } from './log/writer.js';
export {
  buildPackage,
  packageHeader,
  packageLine,
  packageSeal,
  type SealedPackage,
} from './package/build.js';
export { CHECK_ORDER, type CheckName, type CheckResult } from './package/checks.js';
export { type CrossVerification, crossVerify } from './package/cross-verify.js';
export {
  formatOf,
  PackageError,
  type PackageErrorCode,
  type PackageFormat,
  type PackageHeader,
  PackagePart,
  PackageReader,
  type PackageSeal,
  parseHeader,
  parseSeal,
  recordLeaf,
} from './package/grammar.js';
export { type SealOptions, sealLog } from './package/seal.js';
export {
  bufferLines,
  type VerifyOptions,
  type VerifyResult,
  verifyPackage,
  verifyPackageLines,
} from './package/verify.js';
export { canonicalTool, TOOL_ALIASES, toolArgument } from './policy/aliases.js';
export { CONTROL_PLANE_MODES, type ControlPlane, controlPlaneGlobs } from './policy/control-plane.js';
export {
  CERTIFICATE_BACKEND,
  certificatePolicy,
  certificateStateAt,
  judgeCall,
  type NormalCall,
  normalizeCall,
  verdictDecision,
} from './policy/judge.js';
export { inferToolKind, inferToolKindFromSchema } from './policy/kinds.js';
export {
  type ActionPolicy,
  type ActionVerdict,
  evaluateAction,
  matchAction,
  type OpaqueShell,
  PolicyError,
  parsePattern,
} from './policy/patterns.js';
export { type FileEffect, type ShellFileEffects, shellFileEffects } from './policy/shell-effects.js';
export {
  composeReceipt,
  type Receipt,
  ReceiptComposer,
  ReceiptError,
  receiptBytes,
} from './receipt/receipt.js';
export { type AppendInput, type ChainHead, type ChainLink, RecordChain } from './record/chain.js';
export { RecordError, type Signer } from './record/codec.js';
export type {
  AgentAttribution,
  BackendAnswer,
  CanonicalEvent,
  EventRecord,
  PolicyDecision,
  ResolvedPath,
  SessionBinding,
} from './record/record.js';
export { redactErrorMessage, redactText, redactValue } from './redact.js';
