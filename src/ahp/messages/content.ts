/**
 * Content items: selection-aware parts (text or attachment × body, gap, metadata, omit), canonical
 * messages that own a role and ordered parts, and the list shapes built from them.
 */
import { isJsonObject } from '../../core/json.js';
import {
  arr,
  bool,
  type Check,
  constant,
  int,
  issue,
  nonEmpty,
  obj,
  oneOfValues,
  type Props,
  str,
} from './shape.js';

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

const SHA256_HEX = str({
  min: 64,
  max: 64,
  pattern: /^[a-f0-9]{64}$/,
  patternName: '64 lowercase hexadecimal characters',
});

/** `text/*`, `application/json` and any `+json` type: never allowed on an attachment. */
const TEXT_OR_JSON_MEDIA = /^(?:[Tt][Ee][Xx][Tt]\/|[^/]+\/(?:[^;]+\+)?[Jj][Ss][Oo][Nn](?:;|$))/;

function never(rule: string, message: string): Check {
  return (_value, pointer, out) => issue(out, pointer, rule, message);
}

const attachmentMediaType: Check = (value, pointer, out) => {
  nonEmpty(value, pointer, out);
  if (typeof value === 'string' && TEXT_OR_JSON_MEDIA.test(value)) {
    issue(
      out,
      pointer,
      'content.attachment-media-type',
      `text and JSON are inline text, never attachments; got ${JSON.stringify(value)}`,
    );
  }
};

const gap = obj({ reason: nonEmpty, path: nonEmpty }, { required: ['reason'], closed: true });

const contentReference = obj(
  {
    ref: nonEmpty,
    size: never(
      'content.reference-metadata',
      'size belongs in the upload receipt, never in an event reference',
    ),
    sha256: never(
      'content.reference-metadata',
      'sha256 belongs in the upload receipt, never in an event reference',
    ),
  },
  { required: ['ref'], closed: true },
);

function part(kind: 'text' | 'attachment', selection: 'body' | 'metadata' | 'omit', hasGap: boolean): Check {
  const props: Props = {
    id: nonEmpty,
    kind: constant(kind),
    mediaType: kind === 'text' ? constant('text/plain') : attachmentMediaType,
    selection: constant(selection),
    category: nonEmpty,
    synthesized: bool,
  };
  const required = ['id', 'kind', 'mediaType', 'selection'];
  const isBody = selection === 'body' && !hasGap;
  if (hasGap) {
    props.gap = gap;
    required.push('gap');
  }
  if (isBody && kind === 'text') {
    props.text = str();
    required.push('text');
  } else if (isBody) {
    props.body = contentReference;
    required.push('body');
  }
  if (isBody) {
    props.size = never('content.body-metadata', 'a body part carries its content, not size');
    props.sha256 = never('content.body-metadata', 'a body part carries its content, not sha256');
  } else {
    props.size = int(0);
    props.sha256 = SHA256_HEX;
    const why = hasGap ? 'a gap part has no content' : `a ${selection} part must not carry content`;
    if (kind === 'text') props.text = never('content.withheld-text', why);
    props.body = never('content.withheld-body', why);
  }
  if (kind === 'text')
    props.body = never('content.text-as-reference', 'text is always inline, never an upload reference');
  return obj(props, { required, closed: true });
}

const PARTS: Record<string, Check> = {};
for (const kind of ['text', 'attachment'] as const) {
  for (const selection of ['body', 'metadata', 'omit'] as const) {
    PARTS[`${kind}/${selection}`] = part(kind, selection, false);
  }
  PARTS[`${kind}/gap`] = part(kind, 'body', true);
}

function partOf(kinds: readonly string[]): Check {
  return (value, pointer, out) => {
    if (!isJsonObject(value)) return issue(out, pointer, 'type', 'a content part must be an object');
    const kind = value.kind;
    if (typeof kind !== 'string' || !kinds.includes(kind)) {
      if (!('kind' in value)) return issue(out, `${pointer}/kind`, 'required', "'kind' is required");
      return issue(
        out,
        `${pointer}/kind`,
        'enum',
        `part kind must be ${kinds.map((k) => `"${k}"`).join(' or ')}, got ${JSON.stringify(kind)}`,
      );
    }
    const selection = value.selection;
    if (selection !== 'body' && selection !== 'metadata' && selection !== 'omit') {
      if (!('selection' in value))
        return issue(out, `${pointer}/selection`, 'required', "'selection' is required");
      return issue(
        out,
        `${pointer}/selection`,
        'enum',
        `selection must be "body", "metadata" or "omit", got ${JSON.stringify(selection)}`,
      );
    }
    const variant = selection === 'body' && 'gap' in value ? 'gap' : selection;
    PARTS[`${kind}/${variant}`]?.(value, pointer, out);
  };
}

/** Any content part (content-item). */
export const contentPart: Check = partOf(['text', 'attachment']);

/** A text part only (textPart). */
export const textPart: Check = partOf(['text']);

export const textParts: Check = arr(textPart);

export const contentParts: Check = arr(contentPart);

const MESSAGE_PROPS: Props = {
  id: nonEmpty,
  role: oneOfValues(MESSAGE_ROLES),
  parts: contentParts,
  synthesized: bool,
};

/** A canonical message: role on the message, ordered parts. */
export const message: Check = obj(MESSAGE_PROPS, { required: ['id', 'role', 'parts'], closed: true });

export const messages: Check = arr(message);

/** A canonical message whose role is fixed by its slot (user.message.inbound / outbound). */
export function messageWithRole(role: (typeof MESSAGE_ROLES)[number]): Check {
  return obj({ ...MESSAGE_PROPS, role: constant(role) }, { required: ['id', 'role', 'parts'], closed: true });
}

/** Parts of a list of messages or bare parts that withhold text (metadata, omit or gap). */
export function withholdsContent(value: unknown): boolean {
  const parts: unknown[] = [];
  if (Array.isArray(value)) {
    for (const entry of value) {
      if (isJsonObject(entry) && Array.isArray(entry.parts)) parts.push(...entry.parts);
      else parts.push(entry);
    }
  }
  return parts.some(
    (p) => isJsonObject(p) && (p.selection === 'metadata' || p.selection === 'omit' || 'gap' in p),
  );
}

/** Every attachment body ref inside a list of messages (or bare parts). */
export function attachmentRefs(value: unknown): string[] {
  const refs: string[] = [];
  const visitPart = (p: unknown) => {
    if (isJsonObject(p) && p.kind === 'attachment' && isJsonObject(p.body) && typeof p.body.ref === 'string')
      refs.push(p.body.ref);
  };
  if (Array.isArray(value)) {
    for (const entry of value) {
      if (isJsonObject(entry) && Array.isArray(entry.parts)) entry.parts.forEach(visitPart);
      else visitPart(entry);
    }
  }
  return refs;
}
