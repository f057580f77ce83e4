/**
 * What a session is bound to when it starts: the agent certificate and the hook registration in
 * force. Their digests go into the signed `session.start` record; the copies kept in the session
 * directory are files the agent can write, so every later use checks a copy against the digest
 * the record holds and refuses one that differs — a copied-over certificate or registration never
 * silently changes the live policy.
 */
import { parseRegistrationText, RegistrationError } from '../ahp/registration/registration.js';
import type { Registration } from '../ahp/registration/types.js';
import { parseJson } from '../core/canonical.js';
import { digest } from '../core/hash.js';
import { readRegularFileSync } from '../core/regular-file.js';
import { type AgentCertificate, certificateDigest, verifyCertificate } from '../evidence/certificate.js';
import type { Signer } from '../evidence/record/codec.js';
import type { SessionBinding } from '../evidence/record/record.js';
import { SessionError } from './store.js';

export { certificateDigest };

/** The most a certificate file may hold (one is a few kilobytes). */
export const CERTIFICATE_FILE_LIMIT = 1024 * 1024;
/** The most a hook registration file may hold. */
export const REGISTRATION_FILE_LIMIT = 4 * 1024 * 1024;

/** A registration's bytes: a regular file of at most REGISTRATION_FILE_LIMIT bytes (never a FIFO). */
export function readRegistrationFile(path: string): Buffer {
  return readRegularFileSync(path, REGISTRATION_FILE_LIMIT);
}

/** The digest that binds a registration: SHA-256 of the document's bytes. */
export function registrationDigest(bytes: Uint8Array): string {
  return digest(bytes);
}

export function certificateBinding(
  envelope: unknown,
  certificate: AgentCertificate,
): SessionBinding['certificate'] {
  return { digest: certificateDigest(envelope), serial: certificate.serial, agent: certificate.agent.name };
}

/** Reads and verifies a certificate envelope from a file with the ship key (and the bytes read). */
export function readVerifiedCertificate(
  path: string,
  trusted: Signer['privateKey'][],
): { envelope: unknown; certificate: AgentCertificate; bytes: Buffer } {
  let envelope: unknown;
  let bytes: Buffer;
  try {
    bytes = readRegularFileSync(path, CERTIFICATE_FILE_LIMIT);
    envelope = parseJson(bytes);
  } catch (error) {
    throw new SessionError('corrupt', `the certificate ${path} cannot be read: ${(error as Error).message}`);
  }
  try {
    return { envelope, certificate: verifyCertificate(envelope, trusted).certificate, bytes };
  } catch (error) {
    throw new SessionError(
      'corrupt',
      `the certificate ${path} does not verify with the ship key (${(error as Error).message}); nothing was recorded`,
    );
  }
}

/** The session's certificate copy, verified and checked against the digest its start recorded. */
export function boundCertificate(
  path: string,
  signer: Signer,
  binding: SessionBinding | undefined,
): AgentCertificate {
  const { envelope, certificate } = readVerifiedCertificate(path, [signer.privateKey]);
  const expected = binding?.certificate?.digest;
  if (expected !== undefined && certificateDigest(envelope) !== expected) {
    throw new SessionError(
      'corrupt',
      `the session's certificate ${path} is not the one it started under (${expected}); nothing was recorded`,
    );
  }
  return certificate;
}

/** Parses a registration document; a bad one is a SessionError naming the pointer at fault. */
export function readRegistration(bytes: Uint8Array, where: string): Registration {
  try {
    return parseRegistrationText(bytes).registration;
  } catch (error) {
    if (!(error instanceof RegistrationError)) throw error;
    const first = error.issues[0];
    throw new SessionError(
      'corrupt',
      `${where}: ${first ? `${first.pointer || '/'}: ${first.message}` : error.message}`,
    );
  }
}

/** The session's registration copy, checked against the digest its start recorded. */
export function boundRegistration(path: string, binding: SessionBinding | undefined): Registration {
  let bytes: Buffer;
  try {
    bytes = readRegistrationFile(path);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new SessionError(
      'corrupt',
      `the session's registration ${path} cannot be read: ${e.code === undefined ? e.message : e.code}`,
    );
  }
  const expected = binding?.registration?.digest;
  if (expected === undefined || registrationDigest(bytes) !== expected) {
    throw new SessionError(
      'corrupt',
      `the session's registration ${path} is not the one it started under${expected ? ` (${expected})` : ''}; nothing was recorded`,
    );
  }
  return readRegistration(bytes, path);
}
