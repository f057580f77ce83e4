/**
 * How one action pattern meets one tool call: what the call acts on (its command, the files it
 * reads and writes, its URLs — for shell commands through the reader and writer tables, for MCP
 * and unknown tools through their inferred kind), the lenient test of forbid and escalate
 * patterns and the strict cover of allow patterns. The language is in docs/policy.md.
 */

import { posix } from 'node:path';
import { globMatches } from '../../core/glob.js';
import type { ActionCall, ActionPattern } from './action.js';
import { canonicalTool, kindFromHint, type ToolKind, toolArgument } from './aliases.js';
import { plainWord } from './effect-words.js';
import { inferToolKind } from './kinds.js';
import { runsLineWrittenCode } from './line-code.js';
import { writeThroughLineLink } from './line-links.js';
import { foldPath, globMeets, pathMatches, shellPathMatch } from './paths.js';
import { type ShellAnalysis, type SimpleCommand, splitShellCommand } from './shell.js';
import { commandFileEffects, type OpenedFile, openedFiles, type WrittenWord } from './shell-effects.js';
import type { ShellWord } from './shell-grammar.js';
import { matchCommand } from './shell-match.js';
import { typedInputReason } from './typed-input.js';
import { hostInDomain, urlHosts } from './urls.js';

/** A file a call touches: a tool's path, or a shell word with the directory it is relative to. */
interface FileRef {
  /** For a shell write, with how far below it the command reaches (shell-effects.ts). */
  word: WrittenWord;
  /** For shell words: the directory as far as `cd` shows (relative to the call's), or undefined when unknowable. */
  shellCwd?: string | undefined;
  fromShell: boolean;
}

export interface CallFacts {
  raw: string;
  canonical: string;
  /** The kind from the alias table, or inferred from name and input for MCP and unknown tools. */
  kind: ToolKind;
  /** The command, its analysis, and every text form a glob is tried against (whole line, each command). */
  command?: { text: string; shell: ShellAnalysis; texts: string[] };
  /** The tool's kind was inferred (MCP or unknown name), so kind-named patterns apply to it. */
  inferred: boolean;
  /** The paths the tool's input names. */
  paths: string[];
  reads: FileRef[];
  writes: FileRef[];
  urls: string[];
  cwd?: string;
  /** Where the call ran, when it differs from `cwd`. */
  base?: string;
  /** Why the call as a whole is opaque (its record, or input typed into it later), when it is. */
  opaque?: string;
  /** Where the shell command's written files lead through links, as the record says: allows must cover these too. */
  linkedWrites: string[];
}

export type Touch = 'yes' | 'possible' | 'no';

/** Which of a call's file lists a kind of tool reads and writes. */
const FILE_EFFECTS: Partial<Record<ToolKind, { reads: boolean; writes: boolean }>> = {
  read: { reads: true, writes: false },
  search: { reads: true, writes: false },
  write: { reads: false, writes: true },
  delete: { reads: false, writes: true },
  edit: { reads: true, writes: true },
};

/**
 * An MCP or unknown tool's kind: what its name and input say, or, when they say nothing, what its
 * `tool.kind` hint names (the MCP gateway's, read from the tool's input schema). A hint only ever
 * widens what a call is judged as: it cannot turn a call its input shows to be a shell into a read.
 */
function widened(inferred: ToolKind, hint: string | undefined): ToolKind {
  if (inferred !== 'other') return inferred;
  const kind = kindFromHint(hint);
  return kind === undefined || kind === 'mcp' ? inferred : kind;
}

export function factsOf(call: ActionCall): CallFacts {
  const identity = canonicalTool(call.tool, call.kind);
  const kind =
    identity.kind === 'mcp' || identity.kind === 'other'
      ? widened(inferToolKind(call.tool, call.input), call.kind)
      : identity.kind;
  const argument = toolArgument(call.tool, call.input, call.kind);
  const paths = argument.paths ?? [];
  const facts: CallFacts = {
    inferred: identity.kind === 'mcp' || identity.kind === 'other',
    raw: call.tool,
    canonical: identity.canonical,
    kind,
    paths,
    reads: [],
    writes: [],
    urls: argument.urls ?? [],
    linkedWrites: [],
  };
  const effects = FILE_EFFECTS[kind];
  for (const path of paths) {
    const ref: FileRef = { word: plainWord(path), fromShell: false };
    if (effects?.reads) facts.reads.push(ref);
    if (effects?.writes) facts.writes.push(ref);
  }
  let lineLink: string | undefined;
  if (argument.command !== undefined) {
    const shell = splitShellCommand(argument.command);
    const whole = argument.command.trim();
    const texts = new Set([whole, whole.replace(/\s+/g, ' ')]);
    for (const c of shell.commands) texts.add(c.raw).add(c.text).add(c.stripped);
    facts.command = { text: argument.command, shell, texts: [...texts] };
    const home = <W extends ShellWord>(word: W) => homeWord(word, call.home);
    const written: WrittenWord[][] = [];
    const descriptors: number[][] = [];
    for (const command of shell.commands) {
      const touched = commandFileEffects(command);
      descriptors.push(touched.descriptors);
      for (const word of touched.reads)
        facts.reads.push({ word: home(word), shellCwd: command.cwd, fromShell: true });
      // A home-relative word is copied whole: how far it reaches stays with it.
      const writes = touched.writes.map(home);
      for (const word of writes) facts.writes.push({ word, shellCwd: command.cwd, fromShell: true });
      written.push(writes);
    }
    addDescriptorWrites(facts, shell.commands, descriptors, home);
    if (call.resolved !== undefined && call.resolved.length > 0) addLinked(facts, call);
    const from = call.base ?? call.cwd;
    lineLink =
      writeThroughLineLink(shell.commands, written, from) ??
      runsLineWrittenCode(shell.commands, written, from);
  }
  const opaque =
    call.opaque ?? typedInputReason(call.tool, call.input, facts.command?.shell.commands ?? []) ?? lineLink;
  if (opaque !== undefined) facts.opaque = opaque;
  if (call.cwd !== undefined) facts.cwd = call.cwd;
  if (call.base !== undefined) facts.base = call.base;
  return facts;
}

/**
 * A write to a descriptor by its path reopens the file the line opened on it (`exec 3<protected/x;
 * echo hi > /dev/fd/3`, `echo hi <protected/x >/dev/stdin`): it is a write of that file, and of what
 * is below it when it is a folder (`exec 3<protected; rm /dev/fd/3/x`). With descriptors duplicated
 * on the line (`4<&3`, `2>&1`), or another process's named, any file the line opened may be meant.
 */
function addDescriptorWrites(
  facts: CallFacts,
  commands: readonly SimpleCommand[],
  /** The descriptors each command writes through by name (commandFileEffects). */
  descriptors: readonly (readonly number[])[],
  home: <W extends ShellWord>(word: W) => W,
): void {
  const opened = openedFiles(commands);
  if (opened.length === 0) return;
  const duplicated = commands.some((c) => c.redirections.some((r) => r.op === '>&' || r.op === '<&'));
  const byFd = new Map<number, OpenedFile[]>();
  for (const file of opened)
    for (const fd of file.fds) {
      const list = byFd.get(fd);
      if (list === undefined) byFd.set(fd, [file]);
      else list.push(file);
    }
  const seen = new Set<number>();
  let reached = new Set<OpenedFile>();
  for (const fds of descriptors) {
    if (fds.length === 0) continue;
    if (duplicated || fds.includes(-1)) {
      reached = new Set(opened);
      break;
    }
    for (const fd of fds) {
      if (seen.has(fd)) continue;
      seen.add(fd);
      for (const file of byFd.get(fd) ?? []) reached.add(file);
    }
  }
  for (const file of reached)
    facts.writes.push({ word: { ...home(file.word), tree: 'all' }, shellCwd: file.cwd, fromShell: true });
}

/**
 * `~` and `~/…` in the user's home, when the session recorded it; `~+` is where the command runs
 * (`$PWD`) and `~-` the folder before it (`$OLDPWD`, known only at run time): bash expands them
 * before the command runs.
 */
function homeWord<W extends ShellWord>(word: W, home: string | undefined): W {
  if (!word.tilde) return word;
  const m = /^~([+-]?)(?=\/|$)/.exec(word.value);
  if (m === null) return word;
  const rest = word.value.slice(m[0].length);
  if (m[1] === '+') return { ...word, value: `.${rest}`, tilde: false };
  if (m[1] === '-') return { ...word, value: `$OLDPWD${rest}`, dynamic: true, tilde: false };
  return home === undefined ? word : { ...word, value: `${home}${rest}`, tilde: false };
}

/**
 * The real locations of a shell command's static files, from the paths the boundary resolved
 * through links (recorded as absolute paths against where the command ran): each is judged as a
 * file the command reads or writes, beside the path as written.
 */
function addLinked(facts: CallFacts, call: ActionCall): void {
  // A path may lead to two places (a `..` after a link: links.ts), each judged.
  const linked = new Map<string, string[]>();
  for (const r of call.resolved ?? []) linked.set(r.path, [...(linked.get(r.path) ?? []), r.resolved]);
  for (const effect of ['reads', 'writes'] as const) {
    for (const ref of [...facts[effect]]) {
      if (!ref.fromShell || ref.word.dynamic || ref.word.glob || ref.shellCwd === undefined) continue;
      const from = call.base ?? call.cwd;
      if (from === undefined) continue;
      for (const real of linked.get(posix.resolve(from, ref.shellCwd, ref.word.value)) ?? []) {
        facts[effect].push({ word: plainWord(real), fromShell: false });
        if (effect === 'writes') facts.linkedWrites.push(real);
      }
    }
  }
}

const patternKinds = new WeakMap<ActionPattern, ToolKind>();

/** The kind a pattern's name resolves to, once per pattern. */
function kindOf(pattern: ActionPattern): ToolKind {
  let kind = patternKinds.get(pattern);
  if (kind === undefined) {
    kind = canonicalTool(pattern.name).kind;
    patternKinds.set(pattern, kind);
  }
  return kind;
}

/** Patterns that judge what a call reads (`Read`) or writes (`Write`, `Edit`, `Delete`), whatever the tool. */
function effectOf(pattern: ActionPattern): 'reads' | 'writes' | undefined {
  if (pattern.family !== undefined || pattern.argument === undefined) return undefined;
  const kind = kindOf(pattern);
  if (kind === 'read') return 'reads';
  return kind === 'write' || kind === 'edit' || kind === 'delete' ? 'writes' : undefined;
}

/** The name test; `lenient` (forbid, escalate) also lets a tool's inferred kind stand for its name. */
function nameMatches(pattern: ActionPattern, facts: CallFacts, lenient: boolean): boolean {
  if (pattern.family !== undefined) {
    return facts.raw.startsWith(pattern.family) || facts.canonical.startsWith(pattern.family);
  }
  if (pattern.canonical === facts.canonical || pattern.name === facts.raw) return true;
  if (!lenient) return false;
  const patternKind = kindOf(pattern);
  return facts.inferred && patternKind !== 'other' && patternKind !== 'mcp' && patternKind === facts.kind;
}

/** True when a forbid or escalate pattern could see this call at all (its name, kind or effects). */
export function appliesTo(pattern: ActionPattern, facts: CallFacts): boolean {
  return (
    nameMatches(pattern, facts, true) || (effectOf(pattern) !== undefined && facts.command !== undefined)
  );
}

/** The directory a shell word is relative to, joined to the call's; undefined when unknowable. */
function shellBase(
  ref: FileRef,
  anchor: string | undefined,
  start: string | undefined,
): { path: string; cwd: string | undefined; lost: boolean } {
  const value = ref.word.value;
  if (!ref.fromShell) return { path: value, cwd: anchor, lost: false };
  if (ref.shellCwd === undefined) return { path: value, cwd: undefined, lost: !posix.isAbsolute(value) };
  // A shell path is made absolute from where the command ran; patterns stay anchored at `cwd`.
  const from = start ?? anchor;
  if (from !== undefined)
    return { path: posix.resolve(from, ref.shellCwd, value), cwd: anchor ?? from, lost: false };
  return {
    path: ref.shellCwd === '.' ? value : posix.join(ref.shellCwd, value),
    cwd: undefined,
    lost: false,
  };
}

function fileTouch(argument: NonNullable<ActionPattern['argument']>, ref: FileRef, facts: CallFacts): Touch {
  const base = shellBase(ref, facts.cwd, facts.base);
  const word = { ...ref.word, value: base.path };
  const touch = ref.fromShell
    ? shellPathMatch(argument.path, word, base.cwd)
    : pathMatches(argument.path, base.path, base.cwd, true)
      ? 'yes'
      : 'no';
  if (touch === 'no' && base.lost && (argument.path.absolute || argument.path.hasSlash)) return 'possible';
  return touch;
}

function urlMatches(argument: NonNullable<ActionPattern['argument']>, url: string, every: boolean): boolean {
  if (argument.domain === undefined) return globMatches(argument.command, url);
  const domain = argument.domain;
  const hosts = urlHosts(url);
  if (hosts.length === 0) return false;
  return every ? hosts.every((h) => hostInDomain(h, domain)) : hosts.some((h) => hostInDomain(h, domain));
}

function commandTouch(
  argument: NonNullable<ActionPattern['argument']>,
  command: NonNullable<CallFacts['command']>,
): Touch {
  for (const text of command.texts) if (globMatches(argument.command, text)) return 'yes';
  const shell = argument.shell;
  if (shell === undefined) return 'no';
  let best: Touch = 'no';
  for (const c of command.shell.commands) {
    const match = matchCommand(shell, c);
    if (match === 'yes') return 'yes';
    if (match === 'possible') best = 'possible';
  }
  return best;
}

const rank: Record<Touch, number> = { no: 0, possible: 1, yes: 2 };
const better = (a: Touch, b: Touch): Touch => (rank[b] > rank[a] ? b : a);

/** Lenient match (forbid, escalate): the pattern touches any part of the call. */
export function touches(pattern: ActionPattern, facts: CallFacts): Touch {
  const argument = pattern.argument;
  const effect = effectOf(pattern);
  let best: Touch = 'no';
  if (effect !== undefined && argument !== undefined) {
    for (const ref of facts[effect]) {
      best = better(best, fileTouch(argument, ref, facts));
      if (best === 'yes') return best;
    }
  }
  if (!nameMatches(pattern, facts, true)) return best;
  if (argument === undefined) return 'yes';
  if (facts.command !== undefined) best = better(best, commandTouch(argument, facts.command));
  if (best === 'yes') return best;
  if (facts.paths.some((p) => pathMatches(argument.path, p, facts.cwd, true))) return 'yes';
  if (facts.urls.some((u) => urlMatches(argument, u, false))) return 'yes';
  return best;
}

/**
 * A write pattern under a folder the call writes as a whole: `rm -rf .` deletes `protected/` and
 * `tar -xf a.tar` may write into it, so `Write(protected/**)` is touched — `yes` when the command
 * reaches all the folder holds, `possible` when only some of it, named nowhere on the line. Only
 * patterns anchored by a leading literal folder count (docs/policy.md, "Whole folders").
 */
export function folderTouch(
  pattern: ActionPattern,
  facts: CallFacts,
): { touch: Touch; folder: string } | undefined {
  const argument = pattern.argument;
  if (effectOf(pattern) !== 'writes' || argument === undefined) return undefined;
  const { prefix, absolute, hasSlash } = argument.path;
  if (prefix === '' || (!absolute && (!hasSlash || facts.cwd === undefined))) return undefined;
  const held = absolute ? prefix : posix.resolve(foldPath(facts.cwd!), prefix);
  // A repository-wide write from inside the project: the project is taken for the repository
  // (its root is not on the line; the session's workspace root is what patterns are anchored at).
  const anchor = facts.cwd === undefined ? undefined : foldPath(posix.normalize(facts.cwd));
  let found: { touch: Touch; folder: string } | undefined;
  for (const ref of facts.writes) {
    const { tree, worktree } = ref.word;
    if (tree === undefined || ref.word.dynamic) continue;
    const base = shellBase(ref, facts.cwd, facts.base);
    if (base.lost || !posix.isAbsolute(base.path)) continue;
    let folder = foldPath(posix.normalize(base.path)).replace(/(.)\/+$/, '$1');
    // A glob (`rm -rf *`) names folders only when the command runs: one may hold the pattern's.
    if (ref.word.glob) {
      if (globMeets(folder, held)) found ??= { touch: 'possible', folder: `\`${ref.word.raw}\`` };
      continue;
    }
    const whole = worktree && anchor !== undefined && (folder === anchor || folder.startsWith(`${anchor}/`));
    if (whole) folder = anchor!;
    if (held !== folder && !held.startsWith(folder === '/' ? '/' : `${folder}/`)) continue;
    const label = whole
      ? `the working tree of the repository holding \`${ref.word.raw}\``
      : `\`${ref.word.raw}\``;
    if (tree === 'all') return { touch: 'yes', folder: label };
    found ??= { touch: 'possible', folder: label };
  }
  return found;
}

/** A redirection into a file is covered by an allow pattern for writing it (`Write(…)`, `Edit(…)`). */
function writeCovered(patterns: readonly ActionPattern[], command: SimpleCommand, facts: CallFacts): boolean {
  const writes = commandFileEffects({ ...command, invocation: undefined } as SimpleCommand).writes;
  return writes.every((word) => {
    if (word.dynamic || word.glob || command.cwd === undefined)
      return patterns.some((p) => p.argument === undefined);
    const base = shellBase({ word, shellCwd: command.cwd, fromShell: true }, facts.cwd, facts.base);
    return patterns.some(
      (p) => p.argument === undefined || pathMatches(p.argument.path, base.path, base.cwd, false),
    );
  });
}

/** Strict cover (allow): every simple command, redirected write, path and URL is matched by some allow pattern. */
export function covered(patterns: readonly ActionPattern[], facts: CallFacts): ActionPattern | undefined {
  const named = patterns.filter((p) => nameMatches(p, facts, false));
  const bare = named.find((p) => p.argument === undefined);
  if (bare !== undefined) return bare;
  const withArgument = named.filter((p) => p.argument !== undefined);
  const atoms: ((p: ActionPattern) => boolean)[] = [];
  if (facts.command !== undefined) {
    const writers = patterns.filter(
      (p) => effectOf(p) === 'writes' || (p.argument === undefined && ['write', 'edit'].includes(kindOf(p))),
    );
    for (const c of facts.command.shell.commands) {
      if (!writeCovered(writers, c, facts)) return undefined;
      if (!c.wrapper && c.words.length > 0)
        atoms.push((p) => globMatches(p.argument?.command as never, c.text));
    }
    if (facts.command.shell.commands.length === 0 || !facts.command.shell.complete) return undefined;
    const linkCovered = (path: string) =>
      writers.some((p) => p.argument === undefined || pathMatches(p.argument.path, path, facts.cwd, false));
    if (!facts.linkedWrites.every(linkCovered)) return undefined;
  }
  for (const path of facts.paths)
    atoms.push((p) => pathMatches(p.argument?.path as never, path, facts.cwd, false));
  for (const url of facts.urls) atoms.push((p) => urlMatches(p.argument as never, url, true));
  if (atoms.length === 0) return undefined;
  let last: ActionPattern | undefined;
  for (const atom of atoms) {
    last = withArgument.find(atom);
    if (last === undefined) return undefined;
  }
  return last;
}
