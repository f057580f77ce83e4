/**
 * Agent certificates: a DSSE envelope, signed by the ship key, saying who the agent acts for
 * (ship id), what it may do (bounded_actions), must not do (forbidden), may do only with approval
 * (escalation_required), and for how long. Format: docs/formats.md#agent-certificate.
 */

import type { KeyObject } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { canonicalBytes, canonicalize, parseJson } from '../core/canonical.js';
import {
  asEnvelope,
  decodeBase64,
  type Envelope,
  signEnvelope,
  type TrustedKeys,
  verifyEnvelope,
} from '../core/dsse.js';
import { TallyError } from '../core/errors.js';
import { digest } from '../core/hash.js';
import { keyId, type PublicKeyInput, rawPublicKey, shipId } from '../core/keys.js';
import { CONTROL_PLANE_MODES, type ControlPlane } from './policy/control-plane.js';
import { type OpaqueShell, parsePattern } from './policy/patterns.js';

export const CERTIFICATE_TYPE = 'tally/agent-certificate/v1';
export const CERTIFICATE_PAYLOAD_TYPE = 'application/vnd.tally.certificate+json';

export type CertificateErrorCode = 'invalid' | 'signature' | 'window';

export class CertificateError extends TallyError<CertificateErrorCode> {}

export interface AgentCertificate {
  type: typeof CERTIFICATE_TYPE;
  serial: string;
  ship_id: string;
  issuer: { key_id: string; public_key: string };
  agent: { name: string; model?: string; provider?: string };
  bounded_actions: string[];
  forbidden: string[];
  escalation_required: string[];
  /** How a shell command the policy cannot resolve statically is judged; absent means `ask`. */
  opaque_shell?: OpaqueShell;
  /** How a write to the agent's control plane (its hook settings, `.tally/`) is judged; absent means `ask`. */
  control_plane?: ControlPlane;
  issued_at: string;
  valid_from: string;
  valid_until: string;
}

export interface CertificateRequest {
  name: string;
  allow: string[];
  forbid?: string[];
  escalate?: string[];
  opaqueShell?: OpaqueShell;
  controlPlane?: ControlPlane;
  model?: string;
  provider?: string;
  validFrom: Date;
  validUntil: Date;
  /** Defaults to now; tests pass one for reproducible bytes. */
  issuedAt?: Date;
  serial?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const OPAQUE_SHELL: readonly OpaqueShell[] = ['ask', 'deny'];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/** An optional field that must be one of `choices`: anything else is refused, naming the field. */
function checkChoice(field: string, value: unknown, choices: readonly string[]): void {
  if (value === undefined || choices.includes(value as string)) return;
  throw new CertificateError(
    'invalid',
    `/${field}: must be ${choices.join(', ').replace(/, (\w+)$/, ' or $1')}, got ${JSON.stringify(value)}`,
    { field: `/${field}` },
  );
}

function checkPatterns(field: string, patterns: readonly string[]): void {
  patterns.forEach((pattern, i) => {
    try {
      parsePattern(pattern);
    } catch (error) {
      throw new CertificateError('invalid', `/${field}/${i}: ${(error as Error).message}`, {
        field: `/${field}/${i}`,
      });
    }
  });
}

export function issueCertificate(
  request: CertificateRequest,
  shipKey: KeyObject,
): { certificate: AgentCertificate; envelope: Envelope } {
  if (!NAME.test(request.name)) {
    throw new CertificateError(
      'invalid',
      `/agent/name: '${request.name}' must be 1-64 of [A-Za-z0-9._-], starting alphanumeric`,
      { field: '/agent/name' },
    );
  }
  if (request.allow.length === 0)
    throw new CertificateError('invalid', '/bounded_actions: at least one --allow pattern is required', {
      field: '/bounded_actions',
    });
  checkPatterns('bounded_actions', request.allow);
  checkPatterns('forbidden', request.forbid ?? []);
  checkPatterns('escalation_required', request.escalate ?? []);
  checkChoice('opaque_shell', request.opaqueShell, OPAQUE_SHELL);
  checkChoice('control_plane', request.controlPlane, CONTROL_PLANE_MODES);
  if (!(request.validUntil.getTime() > request.validFrom.getTime())) {
    throw new CertificateError('window', '/valid_until: valid_until must be after valid_from', {
      field: '/valid_until',
    });
  }
  const publicKey = rawPublicKey(shipKey);
  const certificate: AgentCertificate = {
    type: CERTIFICATE_TYPE,
    serial: request.serial ?? `cert_${randomBytes(12).toString('hex')}`,
    ship_id: shipId(publicKey),
    issuer: { key_id: keyId(publicKey), public_key: publicKey.toString('base64') },
    agent: {
      name: request.name,
      ...(request.model ? { model: request.model } : {}),
      ...(request.provider ? { provider: request.provider } : {}),
    },
    bounded_actions: [...request.allow],
    forbidden: [...(request.forbid ?? [])],
    escalation_required: [...(request.escalate ?? [])],
    ...(request.opaqueShell === undefined ? {} : { opaque_shell: request.opaqueShell }),
    ...(request.controlPlane === undefined ? {} : { control_plane: request.controlPlane }),
    issued_at: (request.issuedAt ?? new Date()).toISOString(),
    valid_from: request.validFrom.toISOString(),
    valid_until: request.validUntil.toISOString(),
  };
  return {
    certificate,
    envelope: signEnvelope(canonicalize(certificate), CERTIFICATE_PAYLOAD_TYPE, shipKey),
  };
}

function stringList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new CertificateError('invalid', `certificate field /${field} must be an array of strings`, {
      field: `/${field}`,
    });
  }
  return value as string[];
}

/** Structural reading of a certificate payload (no trust implied). */
export function parseCertificate(value: unknown): AgentCertificate {
  const c = value as Record<string, unknown>;
  const need = (field: string, ok: boolean) => {
    if (!ok)
      throw new CertificateError('invalid', `certificate field ${field} is missing or has the wrong type`, {
        field,
      });
  };
  need('/', typeof c === 'object' && c !== null && !Array.isArray(c));
  need('/type', c.type === CERTIFICATE_TYPE);
  need('/serial', typeof c.serial === 'string');
  need('/ship_id', typeof c.ship_id === 'string');
  const issuer = c.issuer as Record<string, unknown> | undefined;
  need(
    '/issuer',
    typeof issuer === 'object' &&
      issuer !== null &&
      typeof issuer.key_id === 'string' &&
      typeof issuer.public_key === 'string',
  );
  const agent = c.agent as Record<string, unknown> | undefined;
  need('/agent/name', typeof agent === 'object' && agent !== null && typeof agent.name === 'string');
  for (const field of ['issued_at', 'valid_from', 'valid_until']) {
    need(
      `/${field}`,
      typeof c[field] === 'string' &&
        RFC3339.test(c[field] as string) &&
        !Number.isNaN(Date.parse(c[field] as string)),
    );
  }
  // A signed certificate is still checked: its patterns must parse and its window must be one.
  checkPatterns('bounded_actions', stringList(c.bounded_actions, 'bounded_actions'));
  checkPatterns('forbidden', stringList(c.forbidden, 'forbidden'));
  checkPatterns('escalation_required', stringList(c.escalation_required, 'escalation_required'));
  need('/valid_until', Date.parse(c.valid_until as string) > Date.parse(c.valid_from as string));
  checkChoice('opaque_shell', c.opaque_shell, OPAQUE_SHELL);
  checkChoice('control_plane', c.control_plane, CONTROL_PLANE_MODES);
  return c as unknown as AgentCertificate;
}

export interface VerifiedCertificate {
  certificate: AgentCertificate;
  signerKeyIds: string[];
}

/**
 * Verifies a certificate envelope against pinned keys. The certificate must be signed by a
 * pinned key, and its ship_id and issuer must be that key's.
 */
export function verifyCertificate(
  envelope: unknown,
  trusted: TrustedKeys | readonly PublicKeyInput[],
): VerifiedCertificate {
  let verified: ReturnType<typeof verifyEnvelope>;
  try {
    verified = verifyEnvelope(envelope, trusted, { strict: true });
  } catch (error) {
    throw new CertificateError('signature', `certificate signature: ${(error as Error).message}`);
  }
  if (verified.payloadType !== CERTIFICATE_PAYLOAD_TYPE) {
    throw new CertificateError(
      'invalid',
      `payloadType is ${verified.payloadType}, expected ${CERTIFICATE_PAYLOAD_TYPE}`,
    );
  }
  let payload: unknown;
  try {
    payload = parseJson(verified.payload.toString('utf8'));
  } catch (error) {
    throw new CertificateError('invalid', `certificate payload is not JSON: ${(error as Error).message}`);
  }
  const certificate = parseCertificate(payload);
  if (!verified.keyIds.includes(certificate.issuer.key_id)) {
    throw new CertificateError(
      'signature',
      `certificate names issuer ${certificate.issuer.key_id} but was signed by ${verified.keyIds.join(', ')}`,
    );
  }
  const issuerKey = Buffer.from(certificate.issuer.public_key, 'base64');
  if (shipId(issuerKey) !== certificate.ship_id || keyId(issuerKey) !== certificate.issuer.key_id) {
    throw new CertificateError(
      'invalid',
      'certificate ship_id / issuer do not belong to its issuer public key',
    );
  }
  return { certificate, signerKeyIds: verified.keyIds };
}

/** Reads a certificate's payload without verifying it, for display. */
export function readCertificateUnverified(envelope: unknown): AgentCertificate {
  let payload: unknown;
  try {
    payload = parseJson(decodeBase64(asEnvelope(envelope).payload, 'payload').toString('utf8'));
  } catch (error) {
    throw new CertificateError('invalid', `not a certificate envelope: ${(error as Error).message}`);
  }
  return parseCertificate(payload);
}

/**
 * The digest that binds a certificate to a session: SHA-256 of its envelope's canonical JSON, as
 * `session.start` records it (docs/formats.md#event-record).
 */
export function certificateDigest(envelope: unknown): string {
  return digest(canonicalBytes(envelope));
}
