/**
 * Building blocks shared by event payloads: the common envelope, session, identities, model and
 * attempt, errors, execution provenance, usage, tool descriptors (with MCP connection locations),
 * batches and file changes.
 */
import { childPointer, isJsonObject } from '../../core/json.js';
import { contentPart, contentParts, messages } from './content.js';
import { dateTimeFormat, uriFormat } from './formats.js';
import {
  anyObject,
  anyValue,
  arr,
  bool,
  type Check,
  constant,
  int,
  issue,
  nonEmpty,
  num,
  obj,
  oneOfValues,
  type Props,
  REVERSE_DNS,
  str,
} from './shape.js';

export const extensions: Check = obj(
  {},
  {
    rest: anyValue,
    also: (value, pointer, out) => {
      for (const key of Object.keys(value)) {
        if (!REVERSE_DNS.test(key)) {
          issue(
            out,
            childPointer(pointer, key),
            'extension.key',
            `extension key '${key}' must be a reverse-DNS name`,
          );
        }
      }
    },
  },
);

export const session: Check = obj(
  {
    id: nonEmpty,
    cwd: str(),
    workspaceRoots: arr(str()),
    model: str(),
    agent: obj({ id: nonEmpty, type: str() }, { required: ['id'] }),
    synthesized: bool,
  },
  { required: ['id'] },
);

/** `{id, synthesized?}`: turn, call, item, attempt-less identities. */
export function identity(closed: boolean): Check {
  return obj({ id: nonEmpty, synthesized: bool }, { required: ['id'], closed });
}

export const gapList: Check = arr(
  obj({ path: nonEmpty, reason: nonEmpty }, { required: ['path', 'reason'] }),
);

const closedGapList: Check = arr(
  obj({ path: nonEmpty, reason: nonEmpty }, { required: ['path', 'reason'], closed: true }),
  { min: 1 },
);

export interface EnvelopeOptions {
  /** Execution payloads close the `turn` object; other families leave it open. */
  closedTurn: boolean;
  /** Model-visible slots carry canonical messages; generic slots carry bare parts. */
  items: 'messages' | 'parts';
}

/** Members every event may carry (id, source, type, time are required by every event). */
export function envelope(options: EnvelopeOptions): Props {
  return {
    id: nonEmpty,
    source: str({ format: uriFormat }),
    time: str({ format: dateTimeFormat }),
    session,
    native: anyValue,
    extensions,
    parentEventId: nonEmpty,
    items: options.items === 'messages' ? messages : contentParts,
    gaps: gapList,
    turn: identity(options.closedTurn),
    synthesized: bool,
  };
}

export const ENVELOPE_REQUIRED = ['id', 'source', 'type', 'time'] as const;

export const model: Check = obj(
  { id: nonEmpty, provider: nonEmpty },
  { required: ['id', 'provider'], closed: true },
);

export const attempt: Check = obj(
  { id: nonEmpty, number: int(1), synthesized: bool },
  { required: ['id', 'number'], closed: true },
);

export const error: Check = obj(
  {
    message: nonEmpty,
    class: nonEmpty,
    code: nonEmpty,
    status: (value, pointer, out) => {
      if (typeof value === 'number' && Number.isInteger(value)) return;
      if (typeof value === 'string' && value.length > 0) return;
      issue(out, pointer, 'type', 'must be a non-empty string or an integer');
    },
    native: anyValue,
  },
  { required: ['message', 'class'], closed: true },
);

export const SKIP_REASONS = ['supplied_result', 'policy', 'cancelled', 'timeout', 'other'] as const;

/** `{status:"executed"}` or `{status:"skipped", reason, detail?}` (no detail on supplied_result). */
export const execution: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) return issue(out, pointer, 'type', 'must be an object');
  if (value.status === 'executed') return obj({ status: anyValue }, { closed: true })(value, pointer, out);
  if (value.status !== 'skipped') {
    if (!('status' in value)) return issue(out, `${pointer}/status`, 'required', "'status' is required");
    return issue(
      out,
      `${pointer}/status`,
      'enum',
      `must be "executed" or "skipped", got ${JSON.stringify(value.status)}`,
    );
  }
  const props: Props = { status: anyValue, reason: oneOfValues(SKIP_REASONS) };
  if (value.reason !== 'supplied_result') props.detail = nonEmpty;
  obj(props, { required: ['status', 'reason'], closed: true })(value, pointer, out);
};

/** Cross-field rule: a skipped execution here must be a supplied result. */
export function skippedOnlyAsSuppliedResult(
  event: Record<string, unknown>,
  pointer: string,
  out: Parameters<Check>[2],
): void {
  const ex = event.execution;
  if (isJsonObject(ex) && ex.status === 'skipped' && 'reason' in ex && ex.reason !== 'supplied_result') {
    issue(
      out,
      `${pointer}/execution/reason`,
      'execution.skip-reason',
      'at this boundary a skipped execution must be "supplied_result"',
    );
  }
}

const cost = obj(
  {
    amount: num(0),
    currency: str({ pattern: /^[A-Z]{3}$/, patternName: 'a three-letter upper-case currency code' }),
    basis: oneOfValues(['billed', 'reported', 'estimated']),
  },
  { required: ['amount', 'currency', 'basis'], closed: true },
);

function usage(kind: string, scope: string, provenance: readonly string[]): Check {
  return obj(
    {
      kind: constant(kind),
      scope: constant(scope),
      completeness: oneOfValues(['complete', 'partial', 'unknown']),
      provenance: oneOfValues(provenance),
      inputTokens: int(0),
      outputTokens: int(0),
      cacheReadTokens: int(0),
      cacheWriteTokens: int(0),
      cost,
    },
    { required: ['kind', 'scope', 'completeness', 'provenance'], closed: true },
  );
}

export const attemptUsage: Check = usage('amount', 'attempt', ['provider', 'estimate']);
export const turnUsage: Check = usage('total', 'turn', ['provider', 'estimate', 'mixed']);

/** Each listed location member is present or declared missing by a gap with that path. */
function locatedOrGapped(members: readonly string[]) {
  return (value: Record<string, unknown>, pointer: string, out: Parameters<Check>[2]) => {
    const gapPaths = Array.isArray(value.gaps)
      ? value.gaps.map((g) => (isJsonObject(g) ? g.path : undefined))
      : [];
    for (const member of members) {
      if (!(member in value) && !gapPaths.includes(member)) {
        issue(
          out,
          `${pointer}/${member}`,
          'mcp.location-missing',
          `'${member}' is required unless a gap with path "${member}" explains its absence`,
        );
      }
    }
  };
}

const httpUrl = str({ format: uriFormat, pattern: /^https?:\/\//, patternName: 'an http(s) URL' });

const CONNECTIONS: Record<string, Check> = {
  http: obj(
    { transport: anyValue, url: httpUrl, gaps: closedGapList },
    { closed: true, also: locatedOrGapped(['url']) },
  ),
  sse: obj(
    { transport: anyValue, url: httpUrl, gaps: closedGapList },
    { closed: true, also: locatedOrGapped(['url']) },
  ),
  stdio: obj(
    { transport: anyValue, command: nonEmpty, args: arr(str()), cwd: nonEmpty, gaps: closedGapList },
    { closed: true, also: locatedOrGapped(['command', 'args', 'cwd']) },
  ),
  extension: obj(
    { transport: anyValue, addressForm: nonEmpty, address: nonEmpty, gaps: closedGapList },
    { closed: true, also: locatedOrGapped(['addressForm', 'address']) },
  ),
};

const connection: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) return issue(out, pointer, 'type', 'must be an object');
  const transport = value.transport;
  const key = typeof transport === 'string' && /^_./s.test(transport) ? 'extension' : String(transport);
  const check = Object.hasOwn(CONNECTIONS, key) ? CONNECTIONS[key] : undefined;
  if (!check) {
    if (!('transport' in value))
      return issue(out, `${pointer}/transport`, 'required', "'transport' is required");
    return issue(
      out,
      `${pointer}/transport`,
      'enum',
      `must be "http", "sse", "stdio" or an "_"-prefixed extension transport, got ${JSON.stringify(transport)}`,
    );
  }
  check(value, pointer, out);
};

const mcp = obj(
  {
    server: obj({ id: nonEmpty, name: nonEmpty }, { required: ['id'], closed: true }),
    toolName: nonEmpty,
    provenance: oneOfValues(['runtime', 'inferred']),
    connection,
  },
  { required: ['server', 'toolName', 'provenance', 'connection'], closed: true },
);

export const tool: Check = obj(
  { name: nonEmpty, kind: nonEmpty, input: anyObject, origin: oneOfValues(['native', 'mcp']), mcp },
  {
    required: ['name', 'input', 'origin'],
    closed: true,
    also: (value, pointer, out) => {
      if (value.origin === 'mcp' && !('mcp' in value))
        issue(out, `${pointer}/mcp`, 'required', "an MCP-origin tool requires 'mcp'");
      if (value.origin !== 'mcp' && 'mcp' in value)
        issue(out, `${pointer}/mcp`, 'forbidden', '\'mcp\' is only allowed when origin is "mcp"');
    },
  },
);

export const batch: Check = obj(
  { id: nonEmpty, callIds: arr(nonEmpty, { min: 1, unique: true }), synthesized: bool },
  { required: ['id', 'callIds'], closed: true },
);

export const fileChange: Check = obj(
  {
    path: nonEmpty,
    change: oneOfValues(['created', 'modified', 'deleted', 'moved']),
    previousPath: nonEmpty,
    before: contentPart,
    after: contentPart,
  },
  {
    required: ['path', 'change'],
    closed: true,
    also: (value, pointer, out) => {
      if (value.change === 'moved' && !('previousPath' in value))
        issue(out, `${pointer}/previousPath`, 'required', 'a move requires previousPath');
      if (value.change === 'created' && 'before' in value)
        issue(out, `${pointer}/before`, 'forbidden', 'a created file has no before');
      if (value.change === 'deleted' && 'after' in value)
        issue(out, `${pointer}/after`, 'forbidden', 'a deleted file has no after');
    },
  },
);

export const tokenCounts: Check = obj({ before: int(0), after: int(0) }, { closed: true });

/** Cross-field rule: outcome `denied` is a policy skip. */
export function deniedIsPolicySkip(
  value: Record<string, unknown>,
  pointer: string,
  out: Parameters<Check>[2],
): void {
  if (value.outcome !== 'denied' || !isJsonObject(value.execution)) return;
  if (value.execution.status !== 'skipped') {
    issue(
      out,
      `${pointer}/execution/status`,
      'execution.denied-skip',
      'a denied call must have execution status "skipped"',
    );
  } else if ('reason' in value.execution && value.execution.reason !== 'policy') {
    issue(
      out,
      `${pointer}/execution/reason`,
      'execution.denied-skip',
      'a denied call must have skip reason "policy"',
    );
  }
}
