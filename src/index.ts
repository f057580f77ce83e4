/**
 * Tally's public library API. Everything here is documented in docs/api.md; anything not exported
 * here is internal and may change.
 */

// Agent Hooks Protocol: registration, validation, dispatch, transports, the backend kit (docs/ahp.md).
export * from './ahp/index.js';
// Trust core: canonical JSON, hashing, keys, DSSE, Merkle trees.
export {
  CanonicalError,
  canonicalBytes,
  canonicalize,
  canonicalNumber,
  parseJson,
} from './core/canonical.js';
export { type DsseError, type Envelope, pae, signEnvelope, trustKeys, verifyEnvelope } from './core/dsse.js';
export { TallyError } from './core/errors.js';
export { digest, sha256, sha256Hex } from './core/hash.js';
export {
  generateKeyPair,
  KeyError,
  keyId,
  type PrivateKeyInput,
  type PublicKeyInput,
  rawPrivateKey,
  rawPublicKey,
  shipId,
  toPrivateKey,
  toPublicKey,
} from './core/keys.js';
export { createKey, loadPrivateKey, loadPublicKey, type StoredKey } from './core/keystore.js';
export {
  consistencyProof,
  EMPTY_TREE_ROOT,
  inclusionProof,
  leafHash,
  MerkleError,
  merkleRoot,
  merkleRootFromLeafHashes,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
  verifyInclusionHash,
} from './core/merkle.js';
// Evidence: records, the signed log, certificates, receipts, packages, verification.
export {
  type AgentCertificate,
  CertificateError,
  issueCertificate,
  verifyCertificate,
} from './evidence/certificate.js';
export { ChainVerifier, readLogLines, verifyLogFile } from './evidence/log/reader.js';
export { type AppendInput, LogWriter } from './evidence/log/writer.js';
export { buildPackage } from './evidence/package/build.js';
export { type CrossVerification, crossVerify } from './evidence/package/cross-verify.js';
export type { PackageHeader, PackageSeal } from './evidence/package/grammar.js';
export {
  type CheckResult,
  type VerifyOptions,
  type VerifyResult,
  verifyPackage,
  verifyPackageLines,
} from './evidence/package/verify.js';
export { canonicalTool, TOOL_ALIASES, toolArgument } from './evidence/policy/aliases.js';
export {
  type ActionPolicy,
  type ActionVerdict,
  evaluateAction,
  matchAction,
  parsePattern,
} from './evidence/policy/patterns.js';
export { composeReceipt, type Receipt, receiptBytes } from './evidence/receipt/receipt.js';
export type {
  AgentAttribution,
  CanonicalEvent,
  EventRecord,
  PolicyDecision,
} from './evidence/record/record.js';
export { redactText, redactValue } from './evidence/redact.js';
