/**
 * The certificate judge: one policy module for the live boundary and the offline verifier. An
 * event is normalised once (`normalizeCall`: the tool call as the policy sees it, paths against
 * the event's own `session.cwd`, links resolved as the record says) and judged by the certificate's
 * patterns; the same function runs before a call (live) and over the records (verify), so a
 * session is never judged by two different readings of one certificate.
 */
import { posix } from 'node:path';
import { isJsonObject } from '../../core/json.js';
import type { AgentCertificate } from '../certificate.js';
import {
  controlPlanePlaces,
  EXT_OPAQUE,
  type NormalPath,
  normalizePath,
  stringField,
  type WorkspaceFrame,
} from '../normalize.js';
import type { PolicyDecision, ResolvedPath } from '../record/record.js';
import { canonicalTool, PATH_FIELDS, PATHS_FIELDS, type ToolArgument, toolArgument } from './aliases.js';
import { type ActionCall, type ActionPolicy, type ActionVerdict, evaluateAction } from './patterns.js';

/** A call's tool as recorded: what `normalizeCall` and the cross-verification read. */
export interface RecordedTool {
  name: string;
  kind?: string;
  input?: unknown;
}

/** The backend id of Tally's own certificate judge, in registrations, answers and decisions. */
export const CERTIFICATE_BACKEND = 'dev.tally.certificate';
/** What v1 records name the certificate judge. */
export const LEGACY_CERTIFICATE_DECIDER = 'tally-policy';

/** True when `by` names Tally's own certificate judge (any format). */
export function isCertificateJudge(by: string): boolean {
  return by === CERTIFICATE_BACKEND || by === LEGACY_CERTIFICATE_DECIDER;
}

export function certificatePolicy(certificate: AgentCertificate): ActionPolicy {
  return {
    allow: certificate.bounded_actions,
    forbid: certificate.forbidden,
    escalate: certificate.escalation_required,
    ...(certificate.opaque_shell === undefined ? {} : { opaqueShell: certificate.opaque_shell }),
    ...(certificate.control_plane === undefined ? {} : { controlPlane: certificate.control_plane }),
  };
}

/** A tool call as the judge and the receipt both read it. */
export interface NormalCall extends ActionCall {
  /** The canonical tool name (the alias table's), and the reported name as `tool`. */
  canonical: string;
  argument: ToolArgument;
  /** The event's own working directory: what the paths in `argument` are relative to. */
  base?: string;
  /** Every file path the call names, against the event's own cwd, repo-relative when inside. */
  paths: NormalPath[];
}

/**
 * Reads a `tool.before`/`tool.after` event into the call the policy judges. Pure: the paths the
 * judge resolved through links come in `resolved` (the record keeps them), so the verifier reads
 * the same call the live judge read.
 */
export function normalizeCall(
  event: Record<string, unknown>,
  frame: WorkspaceFrame,
  resolved: readonly ResolvedPath[] = [],
): NormalCall | undefined {
  const tool = isJsonObject(event.tool) ? event.tool : undefined;
  if (typeof tool?.name !== 'string') return undefined;
  const kind = typeof tool.kind === 'string' ? tool.kind : undefined;
  const cwd = stringField(event.session, 'cwd') ?? frame.cwd ?? frame.root;
  const opaque = stringField(event.extensions, EXT_OPAQUE);
  const call = actionCall(
    { name: tool.name, ...(kind ? { kind } : {}), input: tool.input },
    frame,
    cwd,
    opaque,
  );
  const argument = toolArgument(tool.name, tool.input, kind);
  const raw = argument.paths ?? (argument.path === undefined ? [] : [argument.path]);
  const paths: NormalPath[] = [];
  for (const path of raw) {
    const normal = normalizePath(path, frame, cwd);
    if (normal !== undefined) paths.push(normal);
  }
  for (const link of resolved) {
    const normal = normalizePath(link.resolved, frame, cwd);
    if (normal !== undefined && !paths.some((p) => p.path === normal.path)) paths.push(normal);
  }
  return {
    ...call,
    canonical: canonicalTool(tool.name, kind).canonical,
    argument,
    paths,
  };
}

/**
 * The call the policy judges: the tool as recorded, run in `cwd` (the event's own), opaque for the
 * reason its record gives (`extensions["dev.tally.opaque"]`), if any. Patterns are anchored at the
 * workspace root; a path relative to `cwd` is made absolute first, so `Write(src/**)` means the
 * same file from whichever folder it is named.
 */
export function actionCall(
  tool: RecordedTool,
  frame: WorkspaceFrame,
  cwd: string | undefined,
  opaque?: string,
): ActionCall {
  const anchor = frame.root ?? cwd;
  const input =
    cwd !== undefined && anchor !== undefined && cwd !== anchor ? absolutePaths(tool.input, cwd) : tool.input;
  return {
    tool: tool.name,
    input,
    ...(tool.kind ? { kind: tool.kind } : {}),
    ...(anchor ? { cwd: anchor } : {}),
    ...(cwd ? { base: cwd } : {}),
    ...(opaque ? { opaque } : {}),
    ...controlPlanePlaces(frame),
  };
}

/** A copy of a tool input with its relative file paths made absolute against `cwd`. */
function absolutePaths(input: unknown, cwd: string): unknown {
  if (!isJsonObject(input)) return input;
  const absolute = (p: unknown) =>
    typeof p === 'string' && p !== '' && !posix.isAbsolute(p) ? posix.resolve(cwd, p) : p;
  const out: Record<string, unknown> = { ...input };
  for (const field of PATH_FIELDS) if (field in out) out[field] = absolute(out[field]);
  for (const field of PATHS_FIELDS)
    if (Array.isArray(out[field])) out[field] = (out[field] as unknown[]).map(absolute);
  return out;
}

const DECISION = { forbidden: 'deny', outside: 'deny', escalate: 'ask', allowed: 'allow' } as const;
const REASON = {
  forbidden: 'matches a forbidden pattern',
  outside: 'outside the certificate’s bounded actions',
  escalate: 'needs escalation',
  allowed: 'within bounded actions',
} as const;
const RANK = { forbidden: 3, escalate: 2, outside: 1, allowed: 0 } as const;

/**
 * The certificate's verdict on a call: the call as given, and again with each path the record
 * says it resolves to (a link to a forbidden file is forbidden); the strictest verdict wins. A
 * shell command's files are judged where they lead inside its own judgement (`resolved` on the
 * call); a file tool's paths by judging the tool again on each real path.
 */
export function judgeCall(
  policy: ActionPolicy,
  call: ActionCall,
  resolved: readonly ResolvedPath[] = [],
): ActionVerdict {
  const shell = toolArgument(call.tool, call.input, call.kind).command !== undefined;
  let verdict = evaluateAction(policy, shell && resolved.length > 0 ? { ...call, resolved } : call);
  if (shell) return verdict;
  for (const link of resolved) {
    const again = evaluateAction(policy, { ...call, input: { file_path: link.resolved } });
    if (RANK[again.verdict] > RANK[verdict.verdict]) verdict = again;
  }
  return verdict;
}

/** A verdict as the decision recorded and answered. */
export function verdictDecision(verdict: ActionVerdict): PolicyDecision {
  return {
    decision: DECISION[verdict.verdict],
    by: CERTIFICATE_BACKEND,
    reason: verdict.reason ?? REASON[verdict.verdict],
    ...(verdict.pattern ? { rule: verdict.pattern } : {}),
  };
}

/** The state of a certificate at `now`: only a current one may allow anything live. */
export function certificateStateAt(
  certificate: AgentCertificate,
  now: Date,
): 'valid' | 'expired' | 'not-yet-valid' {
  const at = now.getTime();
  if (at < Date.parse(certificate.valid_from)) return 'not-yet-valid';
  if (at > Date.parse(certificate.valid_until)) return 'expired';
  return 'valid';
}
