/**
 * The rule-file policy behind `tally ahp serve`: an ordered list of rules, first match wins.
 *
 *   { "rules": [ { "events": ["tool.before"],
 *                  "match": { "tool": "Bash", "commandGlob": "rm -rf *" },
 *                  "effect": "deny", "message": "no recursive deletes" } ] }
 *
 * `events` uses registration selectors (exact name, `family.*`, `*`). `match` is optional; every
 * given key must match: `tool` equals `tool.name`; `commandGlob` matches `tool.input.command`;
 * `pathGlob` matches one of `tool.input.file_path`, `path`, `filePath`, `notebook_path`. Globs are
 * the certificate patterns' (../core/glob.ts, docs/policy.md): `*` and `**`, `\` escapes; in a
 * command glob both stars match anything; in a path glob `*` stays within a segment and `**`
 * crosses them. They run as an automaton in linear time, whatever the command or path. No match
 * (or no rule) answers no effects.
 */

import { parseJson } from '../../core/canonical.js';
import { TallyError } from '../../core/errors.js';
import { compileGlob, type Glob, GlobError, globMatches, globParts } from '../../core/glob.js';
import { isJsonObject } from '../../core/json.js';
import { type CoreEffectType, catalogueEntry, EVENT_CATALOGUE } from '../protocol/catalogue.js';
import type { BackendHandler, Effect, InterceptContext } from './kit.js';

export type RulesErrorCode = 'bad-rules';

export class RulesError extends TallyError<RulesErrorCode> {}

export type RuleEffect = 'deny' | 'allow' | 'ask';

export interface Rule {
  events: string[];
  match: { tool?: string; commandGlob?: string; pathGlob?: string };
  effect: RuleEffect;
  message?: string;
}

const SELECTOR = /^(?:\*|[a-z][a-z0-9]*\.\*)$/;
const MATCH_KEYS = ['tool', 'commandGlob', 'pathGlob'] as const;
const PATH_KEYS = ['file_path', 'path', 'filePath', 'notebook_path'] as const;

function fail(pointer: string, message: string): never {
  throw new RulesError('bad-rules', `${pointer}: ${message}`, { pointer });
}

/** Parses and checks a rule file; the error names the JSON pointer at fault. */
export function parseRules(text: string | Uint8Array): Rule[] {
  let doc: unknown;
  try {
    doc = parseJson(text);
  } catch (error) {
    fail('', `not JSON (${(error as Error).message})`);
  }
  if (!isJsonObject(doc) || !Array.isArray(doc.rules))
    fail('/rules', 'the file must be an object with a "rules" array');
  for (const key of Object.keys(doc)) if (key !== 'rules') fail(`/${key}`, 'unknown key');
  return doc.rules.map((raw, i) => parseRule(raw, `/rules/${i}`));
}

function parseRule(raw: unknown, at: string): Rule {
  if (!isJsonObject(raw)) fail(at, 'a rule must be an object');
  for (const key of Object.keys(raw)) {
    if (!['events', 'match', 'effect', 'message'].includes(key)) fail(`${at}/${key}`, 'unknown key');
  }
  const events = raw.events;
  if (!Array.isArray(events) || events.length === 0) fail(`${at}/events`, 'must be a non-empty array');
  events.forEach((e, j) => {
    if (typeof e !== 'string' || !(SELECTOR.test(e) || catalogueEntry(e)?.interceptable)) {
      fail(`${at}/events/${j}`, 'must be an interceptable event name, "family.*" or "*"');
    }
  });
  const match: Rule['match'] = {};
  if (raw.match !== undefined) {
    if (!isJsonObject(raw.match)) fail(`${at}/match`, 'must be an object');
    for (const [key, value] of Object.entries(raw.match)) {
      if (!(MATCH_KEYS as readonly string[]).includes(key)) fail(`${at}/match/${key}`, 'unknown key');
      if (typeof value !== 'string' || value === '') fail(`${at}/match/${key}`, 'must be a non-empty string');
      match[key as (typeof MATCH_KEYS)[number]] = value;
    }
  }
  const globs = compileMatch(match, `${at}/match`);
  if (raw.effect !== 'deny' && raw.effect !== 'allow' && raw.effect !== 'ask') {
    fail(`${at}/effect`, 'must be "deny", "allow" or "ask"');
  }
  if (raw.message !== undefined && (typeof raw.message !== 'string' || raw.message === '')) {
    fail(`${at}/message`, 'must be a non-empty string');
  }
  if (raw.effect === 'deny' && raw.message === undefined)
    fail(`${at}/message`, 'a deny rule needs a message (its reason)');
  const rule: Rule = {
    events: events as string[],
    match,
    effect: raw.effect,
    message: raw.message as string | undefined,
  };
  compiled.set(rule, globs);
  return rule;
}

interface CompiledMatch {
  command?: Glob;
  path?: Glob;
}

/** Compiled globs per rule: filled by parseRules, or on first use for a rule built in code. */
const compiled = new WeakMap<Rule, CompiledMatch>();

/**
 * Characters other glob dialects treat as wildcards are refused unescaped, so a rule written for
 * one of them cannot silently match less than its author meant.
 */
function refuseForeignWildcards(text: string, pointer: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '?' || c === '[' || c === '{') {
      fail(
        pointer,
        `'${c}' at position ${i} is not a wildcard or a set here (only * and ** are special); write \\${c} to match it literally`,
      );
    }
  }
}

function compileOne(text: string, mode: 'command' | 'path', pointer: string): Glob {
  refuseForeignWildcards(text, pointer);
  try {
    return compileGlob(globParts(text), mode);
  } catch (error) {
    if (!(error instanceof GlobError)) throw error;
    fail(pointer, `${error.message} (position ${error.detail?.position})`);
  }
}

function compileMatch(match: Rule['match'], pointer: string): CompiledMatch {
  const out: CompiledMatch = {};
  if (match.commandGlob !== undefined)
    out.command = compileOne(match.commandGlob, 'command', `${pointer}/commandGlob`);
  if (match.pathGlob !== undefined) out.path = compileOne(match.pathGlob, 'path', `${pointer}/pathGlob`);
  return out;
}

function globsOf(rule: Rule): CompiledMatch {
  let globs = compiled.get(rule);
  if (globs === undefined) {
    globs = compileMatch(rule.match, '/match');
    compiled.set(rule, globs);
  }
  return globs;
}

function selects(selector: string, type: string): boolean {
  if (selector === '*') return true;
  if (selector.endsWith('.*')) return type.startsWith(selector.slice(0, -1));
  return selector === type;
}

function ruleMatches(rule: Rule, event: Record<string, unknown>): boolean {
  if (!rule.events.some((s) => selects(s, String(event.type)))) return false;
  const tool = isJsonObject(event.tool) ? event.tool : undefined;
  const input = tool && isJsonObject(tool.input) ? tool.input : undefined;
  if (rule.match.tool !== undefined && tool?.name !== rule.match.tool) return false;
  const globs = globsOf(rule);
  if (globs.command !== undefined) {
    const command = input?.command;
    if (typeof command !== 'string' || !globMatches(globs.command, command)) return false;
  }
  if (globs.path !== undefined) {
    const path = globs.path;
    const paths = PATH_KEYS.map((k) => input?.[k]).filter((p): p is string => typeof p === 'string');
    if (!paths.some((p) => globMatches(path, p))) return false;
  }
  return true;
}

/** The first matching rule, if any. */
export function firstMatch(rules: readonly Rule[], event: Record<string, unknown>): Rule | undefined {
  return rules.find((rule) => ruleMatches(rule, event));
}

/**
 * Effects for one intercept. `deny` carries the message as its reason. `allow` and `ask` add a
 * `message` effect when one is given and advertised. An `allow` the request did not advertise
 * becomes no effects (allow only suppresses a prompt; answering nothing restricts no less).
 */
export function evaluateRules(rules: readonly Rule[], context: InterceptContext): Effect[] {
  const rule = firstMatch(rules, context.event);
  if (rule === undefined) return [];
  const advertised = context.capabilities.effects;
  if (rule.effect === 'deny') return [{ type: 'deny', reason: rule.message! }];
  if (rule.effect === 'allow' && !advertised.includes('allow')) return [];
  const effects: Effect[] = [{ type: rule.effect }];
  if (rule.message !== undefined && advertised.includes('message'))
    effects.push({ type: 'message', text: rule.message });
  return effects;
}

/**
 * The discovery manifest of a rule backend (the `hooks/capabilities` answer of `tally ahp serve`):
 * every interceptable event some rule selects, in catalogue order, with the effects the rules can
 * return there (their `effect`s, plus `message` when an allow or ask rule carries one), bounded by
 * the catalogue; a boundary where none of them is allowed is left out. Nothing is claimed that the rules cannot produce; unknown limits are explained in
 * `gaps`, never left to read as unlimited.
 */
export function rulesManifest(rules: readonly Rule[], transport: 'http' | 'stdio'): Record<string, unknown> {
  const events = EVENT_CATALOGUE.filter((entry) => entry.interceptable).flatMap((entry) => {
    const selecting = rules.filter((rule) => rule.events.some((s) => selects(s, entry.type)));
    if (selecting.length === 0) return [];
    const wanted = new Set<CoreEffectType>();
    for (const rule of selecting) {
      wanted.add(rule.effect);
      if (rule.effect !== 'deny' && rule.message !== undefined) wanted.add('message');
    }
    const effects = entry.effects.filter((effect) => wanted.has(effect));
    // A boundary where no rule effect is allowed is not claimed (the rules answer nothing there).
    if (effects.length === 0) return [];
    return [{ event: entry.type, modes: ['intercept'], capabilities: { effects } }];
  });
  return {
    events,
    gaps: [
      { path: 'toolPaths', reason: 'rules match tool names and inputs on every tool path the harness sends' },
      { path: 'limits.maxUploadBytes', reason: 'this backend takes no uploads' },
      { path: 'limits.maxContinuations', reason: 'this backend never requests a continuation' },
      {
        path: 'limits.minTimeoutMs',
        reason: "deadlines are the harness subscription's; this backend sets none",
      },
      {
        path: 'limits.maxTimeoutMs',
        reason: "deadlines are the harness subscription's; this backend sets none",
      },
    ],
    transports: [transport],
    authentication: [],
    toolPaths: [],
    contentCategories: ['text'],
    limits: {},
    managedPolicy: { scopes: [], disableable: true },
    correlationIdentityFields: ['id'],
  };
}

/** The rule policy as a backend-kit handler; with `transport`, it also answers `hooks/capabilities`. */
export function rulesHandler(rules: readonly Rule[], transport?: 'http' | 'stdio'): BackendHandler {
  return {
    intercept: (context) => evaluateRules(rules, context),
    ...(transport ? { manifest: rulesManifest(rules, transport) } : {}),
  };
}
