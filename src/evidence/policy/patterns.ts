/**
 * The action pattern language of agent certificates (allow / forbid / escalate lists) and the one
 * function that judges a tool call against them. The language is specified in docs/policy.md.
 */

import { posix } from 'node:path';
import { TallyError } from '../../core/errors.js';
import { compileGlob, type Glob, GlobError, type GlobPart, globMatches, globParts } from '../../core/glob.js';
import { canonicalTool, toolArgument } from './aliases.js';
import { type ShellAnalysis, splitShellCommand } from './shell.js';

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

export interface ActionPolicy {
  allow: string[];
  forbid: string[];
  escalate: string[];
}

export type ActionVerdict = {
  verdict: 'forbidden' | 'escalate' | 'allowed' | 'outside';
  /** The pattern that decided, verbatim. Absent for `outside` and for an escalation with `reason`. */
  pattern?: string;
  /** Why a call was escalated without a pattern (a shell command too deeply nested to check). */
  reason?: string;
};

/** A tool call as the policy sees it. `kind` is the AHP `tool.kind` hint; `cwd` anchors relative paths. */
export interface ActionCall {
  tool: string;
  input?: unknown;
  kind?: string;
  cwd?: string;
}

export interface ActionPattern {
  /** The pattern as written. */
  text: string;
  /** The tool name as written (a family wildcard keeps its trailing `*`). */
  name: string;
  /** For a family wildcard (`mcp__github__*`, `*`): the prefix; otherwise undefined. */
  family?: string;
  /** The canonical tool the name resolves to (not for families). */
  canonical?: string;
  /** The argument glob, compiled for each kind of argument. */
  argument?: {
    source: string;
    command: Glob;
    path: Glob;
    /** `path` behind an optional leading directory run: matches any tail of a path. */
    pathAnywhere: Glob;
    absolute: boolean;
    hasSlash: boolean;
    domain?: string;
  };
}

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
  const pathParts = stripDotSlash(parts);
  const first = pathParts[0];
  const pathSource = source.startsWith('./') ? source.slice(2) : source;
  const domain = source.startsWith('domain:') ? source.slice('domain:'.length) : undefined;
  pattern.argument = {
    source,
    command: compileGlob(parts, 'command', prefixWord),
    path: compileGlob(pathParts, 'path'),
    pathAnywhere: compileGlob([{ star: 2 }, { lit: '/' }, ...pathParts], 'path'),
    absolute: first !== undefined && 'lit' in first && first.lit.startsWith('/'),
    hasSlash: pathSource.replace(/\/+$/, '').includes('/'),
    ...(domain === undefined ? {} : { domain: domain.toLowerCase() }),
  };
  return pattern;
}

function stripDotSlash(parts: GlobPart[]): GlobPart[] {
  const first = parts[0];
  if (first === undefined || !('lit' in first) || !first.lit.startsWith('./')) return parts;
  const rest = first.lit.slice(2);
  return rest === '' ? parts.slice(1) : [{ lit: rest }, ...parts.slice(1)];
}

/** What a call acts on, analysed once per call. */
interface CallFacts {
  raw: string;
  canonical: string;
  command?: { text: string; shell: ShellAnalysis };
  paths: string[];
  urls: string[];
  cwd?: string;
}

function factsOf(call: ActionCall): CallFacts {
  const { canonical } = canonicalTool(call.tool, call.kind);
  const argument = toolArgument(call.tool, call.input, call.kind);
  const facts: CallFacts = {
    raw: call.tool,
    canonical,
    paths: argument.paths ?? [],
    urls: argument.urls ?? [],
  };
  if (argument.command !== undefined)
    facts.command = { text: argument.command, shell: splitShellCommand(argument.command) };
  if (call.cwd !== undefined) facts.cwd = call.cwd;
  return facts;
}

function nameMatches(pattern: ActionPattern, facts: CallFacts): boolean {
  if (pattern.family !== undefined) {
    return facts.raw.startsWith(pattern.family) || facts.canonical.startsWith(pattern.family);
  }
  return pattern.canonical === facts.canonical || pattern.name === facts.raw;
}

/**
 * The path forms a pattern may see. Strict: the path relative to `cwd` (only when inside it) or the
 * absolute path. Lenient (forbid/escalate) adds every tail of an absolute path, since without a
 * working directory any of them could be the project-relative name.
 */
function pathMatches(
  argument: NonNullable<ActionPattern['argument']>,
  path: string,
  cwd: string | undefined,
  lenient: boolean,
): boolean {
  const normal = posix.normalize(path).replace(/(.)\/+$/, '$1');
  const isAbsolute = normal.startsWith('/');
  const test = (candidate: string): boolean =>
    globMatches(argument.path, candidate) ||
    (!argument.hasSlash && globMatches(argument.path, posix.basename(candidate)));
  if (argument.absolute) {
    const absolute = isAbsolute ? normal : cwd === undefined ? undefined : posix.resolve(cwd, normal);
    return absolute !== undefined && globMatches(argument.path, absolute);
  }
  let relative: string | undefined;
  if (!isAbsolute) relative = normal;
  else if (cwd !== undefined) relative = posix.relative(posix.normalize(cwd), normal) || '.';
  if (relative !== undefined && (relative === '..' || relative.startsWith('../'))) relative = undefined;
  if (relative !== undefined && test(relative)) return true;
  if (!lenient) return false;
  // Any tail of the path that starts after a `/`: one pass with the pattern behind an optional `**/`.
  const tail = normal.startsWith('/') ? normal.slice(1) : normal;
  return (
    globMatches(argument.pathAnywhere, tail) ||
    (!argument.hasSlash && globMatches(argument.path, posix.basename(normal)))
  );
}

function urlMatches(argument: NonNullable<ActionPattern['argument']>, url: string): boolean {
  if (argument.domain !== undefined) {
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return false;
    }
    return host === argument.domain || host.endsWith(`.${argument.domain}`);
  }
  return globMatches(argument.command, url);
}

/** Every command text a forbid/escalate pattern is tried against: the whole line and each simple command. */
function commandCandidates(command: NonNullable<CallFacts['command']>): string[] {
  const whole = command.text.trim();
  const out = [whole, whole.replace(/\s+/g, ' ')];
  for (const c of command.shell.commands) out.push(c.raw, c.text, c.stripped);
  return out;
}

/** Lenient match: the pattern touches the call (whole command, any simple command, any path or URL). */
function touches(pattern: ActionPattern, facts: CallFacts): boolean {
  if (!nameMatches(pattern, facts)) return false;
  const argument = pattern.argument;
  if (argument === undefined) return true;
  if (
    facts.command !== undefined &&
    commandCandidates(facts.command).some((t) => globMatches(argument.command, t))
  ) {
    return true;
  }
  if (facts.paths.some((p) => pathMatches(argument, p, facts.cwd, true))) return true;
  return facts.urls.some((u) => urlMatches(argument, u));
}

/** Strict cover: every simple command, path and URL of the call is matched by some allow pattern. */
function covered(patterns: readonly ActionPattern[], facts: CallFacts): ActionPattern | undefined {
  const named = patterns.filter((p) => nameMatches(p, facts));
  const bare = named.find((p) => p.argument === undefined);
  if (bare !== undefined) return bare;
  const withArgument = named.filter((p) => p.argument !== undefined);
  const atoms: ((p: ActionPattern) => boolean)[] = [];
  if (facts.command !== undefined) {
    for (const c of facts.command.shell.commands) {
      if (!c.wrapper) atoms.push((p) => globMatches(p.argument?.command as Glob, c.text));
    }
    if (facts.command.shell.commands.length === 0 || !facts.command.shell.complete) return undefined;
  }
  for (const path of facts.paths) atoms.push((p) => pathMatches(p.argument as never, path, facts.cwd, false));
  for (const url of facts.urls) atoms.push((p) => urlMatches(p.argument as never, url));
  if (atoms.length === 0) return undefined;
  let last: ActionPattern | undefined;
  for (const atom of atoms) {
    last = withArgument.find(atom);
    if (last === undefined) return undefined;
  }
  return last;
}

/** True when the pattern matches the call: its name, and (if it has one) its argument against any part of the call. */
export function matchAction(pattern: ActionPattern, call: ActionCall): boolean {
  return touches(pattern, factsOf(call));
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

/** Judges one call. Precedence: forbidden > escalate > allowed > outside. */
export function evaluateAction(policy: ActionPolicy, call: ActionCall): ActionVerdict {
  const forbid = compileList(policy.forbid, 'forbid');
  const escalate = compileList(policy.escalate, 'escalate');
  const allow = compileList(policy.allow, 'allow');
  const facts = factsOf(call);
  const forbidden = forbid.find((p) => touches(p, facts));
  if (forbidden !== undefined) return { verdict: 'forbidden', pattern: forbidden.text };
  const escalated = escalate.find((p) => touches(p, facts));
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
