/**
 * The action pattern language of agent certificates (allow / forbid / escalate lists) and the one
 * function that judges a tool call against them. The language is specified in docs/policy.md.
 */

import { TallyError } from '../../core/errors.js';
import { compileGlob, GlobError, type GlobPart, globParts } from '../../core/glob.js';
import type { ActionCall, ActionPattern } from './action.js';
import { canonicalTool } from './aliases.js';
import {
  appliesTo,
  type CallFacts,
  covered,
  factsOf,
  folderTouch,
  type Touch,
  touches,
} from './call-match.js';
import { type ControlPlane, controlPlaneGlobs } from './control-plane.js';
import { compilePathArgument } from './paths.js';
import { compileCommandPattern } from './shell-match.js';
import { normaliseHost } from './urls.js';

export type PolicyErrorCode =
  | 'PATTERN_EMPTY'
  | 'PATTERN_BAD_NAME'
  | 'PATTERN_BAD_WILDCARD'
  | 'PATTERN_UNCLOSED'
  | 'PATTERN_TRAILING'
  | 'PATTERN_EMPTY_ARGUMENT'
  | 'PATTERN_BAD_ESCAPE'
  | 'POLICY_BAD_SHAPE';

export class PolicyError extends TallyError<PolicyErrorCode> {}

/** How a command the parser cannot resolve statically is judged (certificate field `opaque_shell`). */
export type OpaqueShell = 'ask' | 'deny';

export interface ActionPolicy {
  allow: string[];
  forbid: string[];
  escalate: string[];
  /** `ask` (the default) escalates an opaque shell command; `deny` forbids it. */
  opaqueShell?: OpaqueShell;
  /** `ask` (the default) escalates a write to the agent's control plane; `deny` forbids it; `allow` judges it as any write. */
  controlPlane?: ControlPlane;
}

export type ActionVerdict = {
  verdict: 'forbidden' | 'escalate' | 'allowed' | 'outside';
  /** The pattern that decided, verbatim. Absent for `outside` and for an escalation with `reason`. */
  pattern?: string;
  /**
   * Why, when no pattern alone decided: a shell command too deeply nested to check, one whose
   * effect is known only at run time (`eval "$x"`, `… | sh`), or one that may match `pattern`.
   */
  reason?: string;
};

export type { ActionCall, ActionPattern } from './action.js';

const NAME_CHAR = /[A-Za-z0-9_.:@/-]/;

function fail(code: PolicyErrorCode, text: string, position: number, why: string): never {
  const character = text[position];
  const at =
    character === undefined
      ? `at the end (position ${position})`
      : `at position ${position} (${JSON.stringify(character)})`;
  throw new PolicyError(code, `invalid action pattern ${JSON.stringify(text)}: ${why} ${at}`, {
    pattern: text,
    position,
    ...(character === undefined ? {} : { character }),
  });
}

/** Splits an argument into glob parts; `\` makes the next character literal. */
function argumentParts(text: string, start: number, end: number): GlobPart[] {
  try {
    return globParts(text, start, end);
  } catch (error) {
    if (!(error instanceof GlobError)) throw error;
    const code = error.code === 'bad-escape' ? 'PATTERN_BAD_ESCAPE' : 'PATTERN_BAD_WILDCARD';
    fail(code, text, error.detail?.position as number, error.message);
  }
}

/** Parses one action pattern: `Name`, `Family*`, `*`, or `Name(argument glob)`. */
export function parsePattern(text: string): ActionPattern {
  if (text === '') fail('PATTERN_EMPTY', text, 0, 'the pattern is empty');
  const open = text.indexOf('(');
  const nameEnd = open < 0 ? text.length : open;
  for (let i = 0; i < nameEnd; i++) {
    const c = text[i] as string;
    if (c === '*') {
      if (i !== nameEnd - 1) fail('PATTERN_BAD_WILDCARD', text, i, 'a tool name may only end with `*`');
    } else if (!NAME_CHAR.test(c)) {
      fail(
        'PATTERN_BAD_NAME',
        text,
        i,
        c === ')' ? 'unexpected `)`' : 'this character cannot appear in a tool name',
      );
    }
  }
  if (nameEnd === 0) fail('PATTERN_BAD_NAME', text, 0, 'the tool name is missing');
  const name = text.slice(0, nameEnd);
  const pattern: ActionPattern = { text, name };
  if (name.endsWith('*')) pattern.family = name.slice(0, -1);
  else pattern.canonical = canonicalTool(name).canonical;
  if (open < 0) return pattern;

  if (!text.endsWith(')')) {
    const lastClose = text.lastIndexOf(')');
    if (lastClose > open)
      fail('PATTERN_TRAILING', text, lastClose + 1, 'unexpected text after the closing `)`');
    fail(
      'PATTERN_UNCLOSED',
      text,
      text.length,
      `the \`(\` at position ${open} is not closed by a final \`)\``,
    );
  }
  let close = text.length - 1;
  // `\)` at the end escapes the paren: then nothing closes the argument.
  let backslashes = 0;
  for (let i = close - 1; i > open && text[i] === '\\'; i--) backslashes++;
  if (backslashes % 2 === 1) {
    fail(
      'PATTERN_UNCLOSED',
      text,
      text.length,
      `the \`(\` at position ${open} is not closed by a final \`)\``,
    );
  }
  if (close === open + 1)
    fail('PATTERN_EMPTY_ARGUMENT', text, close, 'the argument is empty; write the bare name');
  let source = text.slice(open + 1, close);
  let prefixWord = false;
  if (source.endsWith(':*') && !source.endsWith('\\:*')) {
    prefixWord = true;
    close -= 2;
    source = source.slice(0, -2);
    if (source === '') fail('PATTERN_EMPTY_ARGUMENT', text, open + 1, 'nothing before `:*`');
  }
  const parts = argumentParts(text, open + 1, close);
  const domain = source.startsWith('domain:') ? source.slice('domain:'.length) : undefined;
  const shell = compileCommandPattern(source);
  pattern.argument = {
    source,
    command: compileGlob(parts, 'command', prefixWord),
    path: compilePathArgument(parts, source),
    ...(shell === undefined ? {} : { shell }),
    ...(domain === undefined ? {} : { domain: normaliseHost(domain) ?? domain.toLowerCase() }),
  };
  return pattern;
}

/** True when the pattern matches the call: its name, and (if it has one) its argument against any part of the call. */
export function matchAction(pattern: ActionPattern, call: ActionCall): boolean {
  return touches(pattern, factsOf(call)) === 'yes';
}

const compiled = new WeakMap<readonly string[], ActionPattern[]>();

function compileList(list: unknown, field: keyof ActionPolicy): ActionPattern[] {
  if (!Array.isArray(list)) {
    throw new PolicyError('POLICY_BAD_SHAPE', `policy field /${field} must be an array of pattern strings`, {
      pointer: `/${field}`,
    });
  }
  const cached = compiled.get(list);
  if (cached !== undefined) return cached;
  const patterns = list.map((text: unknown, index) => {
    const pointer = `/${field}/${index}`;
    if (typeof text !== 'string') {
      throw new PolicyError('POLICY_BAD_SHAPE', `policy field ${pointer} must be a string`, { pointer });
    }
    try {
      return parsePattern(text);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      throw new PolicyError(error.code, `${pointer}: ${error.message}`, { ...error.detail, pointer });
    }
  });
  compiled.set(list, patterns);
  return patterns;
}

const OPAQUE_REASON = 'the shell command runs code known only at run time';

/** A control-plane location as the pattern `Write(<glob>)` judges it. */
interface PlanePattern {
  pattern: ActionPattern;
  place: string;
}

const planeCache = new Map<string, PlanePattern[]>();

/** The control-plane patterns of the places a call names (its anchor, home and Tally home). */
function planePatterns(call: ActionCall): PlanePattern[] {
  const key = `${call.cwd}\u0000${call.home}\u0000${call.tallyHome}`;
  let found = planeCache.get(key);
  if (found === undefined) {
    const globs = controlPlaneGlobs({ project: call.cwd, home: call.home, tallyHome: call.tallyHome });
    found = globs.map(({ glob, place }) => ({ pattern: parsePattern(`Write(${glob})`), place }));
    if (planeCache.size >= 64) planeCache.clear();
    planeCache.set(key, found);
  }
  return found;
}

/** The first control-plane location the call writes (`yes`), else one it may write (`possible`). */
function planeTouch(
  places: readonly PlanePattern[],
  facts: CallFacts,
): { touch: Touch; place: string } | undefined {
  let possible: PlanePattern | undefined;
  for (const plane of places) {
    const touch = touches(plane.pattern, facts);
    if (touch === 'yes') return { touch, place: plane.place };
    if (touch === 'possible') possible ??= plane;
  }
  return possible === undefined ? undefined : { touch: 'possible', place: possible.place };
}

/** Why a call that writes a whole folder holding a forbidden path is judged as it is. */
function folderReason(folder: string, pattern: ActionPattern, reach: 'all' | 'some'): string {
  return reach === 'all'
    ? `writes all of ${folder}, which holds what ${pattern.text} names`
    : `may write anything under ${folder} (names the line does not show), which holds what ${pattern.text} names`;
}

/** Why a call that writes the control plane is judged as it is. */
function planeReason(hit: { touch: Touch; place: string }, mode: ControlPlane): string {
  const what =
    hit.touch === 'yes'
      ? `writes the agent's control plane (${hit.place})`
      : 'may write the agent\u2019s control plane: a path it writes is known only at run time';
  return `${what}; certificate field control_plane is ${mode}`;
}

/**
 * Judges one call. Precedence: forbidden > opaque (`opaqueShell`) > control plane > escalate >
 * allowed > outside. A forbid pattern the call may match only through a word known at run time
 * counts as opaque. The control plane (`controlPlane`, ask unless said) stands for write patterns
 * over its places: under `deny` it is forbidden right after the forbid patterns, under `ask` it
 * is escalated before the escalate patterns; either way an opaque command may write it.
 */
export function evaluateAction(policy: ActionPolicy, call: ActionCall): ActionVerdict {
  const forbid = compileList(policy.forbid, 'forbid');
  const escalate = compileList(policy.escalate, 'escalate');
  const allow = compileList(policy.allow, 'allow');
  const mode = policy.controlPlane ?? 'ask';
  // A session whose signed start did not record the homes ran before the control plane was
  // judged: it is judged, live and offline, as it was when it ran.
  const plane = mode === 'allow' || call.beforeControlPlane ? [] : planePatterns(call);
  const facts = factsOf(call);
  let possible: ActionPattern | undefined;
  let underFolder: { pattern: ActionPattern; folder: string } | undefined;
  for (const pattern of forbid) {
    const touch: Touch = touches(pattern, facts);
    if (touch === 'yes') return { verdict: 'forbidden', pattern: pattern.text };
    if (touch === 'possible') possible ??= pattern;
    const whole = touch === 'no' ? folderTouch(pattern, facts) : undefined;
    if (whole?.touch === 'yes')
      return {
        verdict: 'forbidden',
        pattern: pattern.text,
        reason: folderReason(whole.folder, pattern, 'all'),
      };
    if (whole !== undefined) underFolder ??= { pattern, folder: whole.folder };
  }
  // A control-plane pattern judges what a call writes, and nothing else of a call — but not the
  // folder a command rewrites without naming it (`git checkout main`, `tar -xf a.tar`): by default
  // every branch switch would wait for a person (docs/policy.md, "Whole folders").
  const named = facts.writes.filter((w) => !w.word.implied);
  const written =
    plane.length === 0 || named.length === 0 ? undefined : planeTouch(plane, { ...facts, writes: named });
  if (mode === 'deny' && written?.touch === 'yes')
    return { verdict: 'forbidden', reason: planeReason(written, mode) };
  const opaque = opaqueReason(facts, [...forbid, ...escalate, ...plane.map((p) => p.pattern)]);
  if (
    possible !== undefined ||
    underFolder !== undefined ||
    opaque !== undefined ||
    (mode === 'deny' && written !== undefined)
  ) {
    const reason =
      possible !== undefined
        ? `the shell command may match ${possible.text}: it depends on words known only at run time`
        : underFolder !== undefined
          ? folderReason(underFolder.folder, underFolder.pattern, 'some')
          : opaque !== undefined
            ? `${OPAQUE_REASON}: ${opaque}`
            : planeReason(written!, mode);
    const verdict = policy.opaqueShell === 'deny' ? 'forbidden' : 'escalate';
    const at = possible ?? underFolder?.pattern;
    return { verdict, ...(at === undefined ? {} : { pattern: at.text }), reason };
  }
  if (written !== undefined) return { verdict: 'escalate', reason: planeReason(written, mode) };
  const escalated = escalate.find((p) => touches(p, facts) !== 'no' || folderTouch(p, facts) !== undefined);
  if (escalated !== undefined) return { verdict: 'escalate', pattern: escalated.text };
  if (facts.command !== undefined && !facts.command.shell.complete) {
    return {
      verdict: 'escalate',
      reason: 'the shell command is nested too deeply or left a quote open to be checked',
    };
  }
  const allowed = covered(allow, facts);
  if (allowed !== undefined) return { verdict: 'allowed', pattern: allowed.text };
  return { verdict: 'outside' };
}

/** Why the call's shell command is opaque, when it is and some forbid or escalate pattern could see it. */
function opaqueReason(facts: CallFacts, patterns: readonly ActionPattern[]): string | undefined {
  const opaque = facts.command?.shell.commands.find((c) => c.opaque !== undefined)?.opaque ?? facts.opaque;
  if (opaque === undefined) return undefined;
  return patterns.some((p) => appliesTo(p, facts)) ? opaque : undefined;
}
