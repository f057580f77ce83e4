/**
 * Tally's trust core (`tally/core`): canonical JSON and its strict parser, hashing, Ed25519 keys
 * and the key store, DSSE envelopes, RFC 9162 Merkle trees and proofs, and the shared helpers.
 * Nothing here depends on anything but `node:` built-ins.
 */
export {
  CanonicalError,
  type CanonicalErrorCode,
  canonicalBytes,
  canonicalize,
  canonicalNumber,
  parseJson,
} from './canonical.js';
export { contentDigest, contentDigestOf, contentDigestSha256 } from './content-digest.js';
export {
  asEnvelope,
  DsseError,
  type DsseErrorCode,
  type Envelope,
  pae,
  signEnvelope,
  type TrustedKeys,
  trustKeys,
  verifyEnvelope,
} from './dsse.js';
export { TallyError } from './errors.js';
export type { CanonicalEvent } from './event.js';
export { GitError, type GitErrorCode } from './git.js';
export { GlobError } from './glob.js';
export { digest, isDigest, sha256, sha256Hex } from './hash.js';
export { tallyHome } from './home.js';
export {
  HttpSignatureError,
  type HttpSignatureErrorCode,
  type ParsedSignature,
  parseSignatures,
  type SignedRequest,
  signatureBase,
  signRequest,
  verifyRequestSignature,
} from './http-signature.js';
export {
  childPointer,
  isJsonObject,
  type JsonObject,
  pointerOf,
  pointerToken,
  pointerTokens,
} from './json.js';
export {
  generateKeyPair,
  KeyError,
  type KeyErrorCode,
  keyId,
  type PrivateKeyInput,
  type PublicKeyInput,
  rawPrivateKey,
  rawPublicKey,
  shipId,
  toPrivateKey,
  toPublicKey,
} from './keys.js';
export {
  createKey,
  loadPrivateKey,
  loadPrivateKeyFile,
  loadPublicKey,
  readPublicKeyFile,
  type StoredKey,
} from './keystore.js';
export { type Line, LineSplitter, LineTooLongError } from './lines.js';
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
} from './merkle.js';
export { RegularFileError, type RegularFileErrorCode } from './regular-file.js';
export {
  NoteError,
  type NoteErrorCode,
  type NoteVerifier,
  noteKeyId,
  noteVerifierKey,
  openNote,
  parseNote,
  parseNoteVerifierKey,
  signNote,
} from './signed-note.js';
export { checkFetchUrl, guardedLookup, isPublicAddress, SsrfError, type SsrfErrorCode } from './ssrf.js';
export { parseDictionary, StructuredFieldError } from './structured-fields.js';
export { isRfc3339DateTime } from './time.js';
export {
  type Checkpoint,
  encodeEntryBundle,
  formatCheckpoint,
  parseCheckpoint,
  parseEntryBundle,
  parseTilePath,
  TlogError,
  tilePath,
} from './tlog-tiles.js';
export { firstBadUtf8Byte } from './utf8.js';
export { TALLY_VERSION } from './version.js';
