/**
 * The files a shell command reads and writes, as far as its text shows: redirections, and the
 * operands of the reader and writer commands in the tables below (from each tool's manual).
 * `Read(…)` and `Write(…)` patterns judge shell commands through these, and the receipt can turn a
 * command that writes a file into a written-file row. Commands outside the tables are judged by
 * name only. Tables: docs/policy.md, "Reads and writes".
 */

import { posix } from 'node:path';
import { patchPaths } from './aliases.js';
import { plainWord, pushAll, reaching, type Touched, values } from './effect-words.js';
import { scriptProgramEffects } from './script-programs.js';
import { type Invocation, type SimpleCommand, splitShellCommand } from './shell.js';
import type { ShellWord } from './shell-grammar.js';
import { optionTableFor, readOptions } from './shell-options.js';
import { PATCH_PROGRAMS, patchFolderAsWritten, patchText } from './shell-patch.js';

import { toolEffects } from './tool-effects.js';
import { treeEffects } from './tree-effects.js';

export type { TreeReach, WrittenWord } from './effect-words.js';

export interface FileEffect {
  /** The path as written (quotes removed); for a dynamic word, its text as written. */
  path: string;
  /** The directory it is relative to: absolute when the call's cwd is known, else relative to it; undefined when a `cd` made it unknowable. */
  cwd: string | undefined;
  /** The path is computed at run time (`$f`, `$(…)`): only its written form is known. */
  dynamic: boolean;
  /** The path holds shell glob characters: bash matches it against the file system. */
  glob: boolean;
  /** What made it a read or write: `redirection`, or the program (`cp`, `tee` …). */
  via: string;
}

export interface ShellFileEffects {
  reads: FileEffect[];
  writes: FileEffect[];
  /** False when the command could not be read whole (nesting cap, open quote). */
  complete: boolean;
  /** True when some command runs code the parser cannot see (`eval "$x"`, `… | sh`): it may touch any file. */
  opaque: boolean;
}

/** Devices and descriptors: writing or reading them touches no file. */
const NOT_A_FILE = /^\/dev\/(?:null|zero|stdin|stdout|stderr|tty|fd\/\d+|random|urandom)$/;

/** Programs that read every operand. */
const READERS = new Set(
  'cat tac nl head tail less more most bat batcat wc od hexdump strings base64 base32 md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum file diff diff3 cmp comm cut paste fold fmt expand unexpand column zcat bzcat xzcat zless zmore source . tr join look rev'.split(
    ' ',
  ),
);
/** Programs that write (create, truncate, delete or change) every operand. */
const WRITERS = new Set('touch rm rmdir unlink shred mkdir mkfifo mknod'.split(' '));
/** Editors read and write what they open. */
const EDITORS = new Set('vi vim nvim nano emacs pico ed ex joe micro code'.split(' '));
/** Compressors that replace each file with its compressed (or decompressed) form beside it. */
const COMPRESSORS = new Set(
  'gzip gunzip pigz unpigz bzip2 bunzip2 xz unxz lzma unlzma zstd unzstd lz4 unlz4 lzip compress uncompress'.split(
    ' ',
  ),
);
/** Programs whose first operand is a mode or owner, the rest being files they change. */
const CHANGERS = new Set('chmod chown chgrp chattr setfacl'.split(' '));
/** A pattern or program text first, files after, unless an option gives the pattern. */
const PATTERN_FIRST: ReadonlyMap<string, readonly string[]> = new Map([
  ['grep', ['regexp', 'file']],
  ['egrep', ['regexp', 'file']],
  ['fgrep', ['regexp', 'file']],
  ['rg', ['-e', '-f', '--regexp', '--file']],
]);

/** Source operands and a destination: cp, mv, ln, install, rsync, scp. */
function copyLike(inv: Invocation, touched: Touched): void {
  const { options, operands, words } = readOptions(inv.args, optionTableFor(inv.program));
  const target = options.get('target-directory')?.[0];
  if (inv.program === 'install' && options.has('directory')) {
    pushAll(touched.writes, operands);
    return;
  }
  const sources = target !== undefined ? operands : operands.slice(0, -1);
  const destination = target !== undefined ? values(words, 'target-directory') : operands.slice(-1);
  if (inv.program === 'ln') {
    // `ln -s TARGET LINK`: only the link is written; with one operand the link is made here.
    if (sources.length === 0 && destination[0] !== undefined)
      touched.writes.push({ ...destination[0], value: posix.basename(destination[0].value) });
    else pushAll(touched.writes, destination);
    return;
  }
  pushAll(touched.reads, sources);
  if (inv.program === 'mv') pushAll(touched.writes, reaching('all', sources));
  if (inv.program === 'rsync') {
    // rsync deletes the files it sent (--remove-source-files), writes its log and batch files, and
    // keeps backups under --backup-dir (relative to the destination when relative).
    if (options.has('remove-source-files')) pushAll(touched.writes, reaching('some', sources));
    pushAll(touched.writes, values(words, 'log-file', 'write-batch', 'only-write-batch'));
    const into = destination[0];
    for (const dir of values(words, 'backup-dir'))
      touched.writes.push({
        ...dir,
        value:
          dir.value.startsWith('/') || into === undefined ? dir.value : posix.join(into.value, dir.value),
        tree: 'some',
      });
  }
  pushAll(touched.writes, destination);
  const recursive =
    inv.program === 'mv' ||
    inv.program === 'rsync' ||
    inv.program === 'scp' ||
    ['recursive', 'archive'].some((o) => options.has(o));
  const into = destination[0];
  // `cp --parents` and `rsync -R` keep each source's path under DEST (rsync: the part after `/./`).
  const keepsPath =
    (inv.program === 'cp' && options.has('parents')) || (inv.program === 'rsync' && options.has('relative'));
  if (keepsPath && into !== undefined && !into.dynamic)
    for (const source of sources) {
      const kept = source.value.includes('/./')
        ? source.value.slice(source.value.indexOf('/./') + 3)
        : source.value;
      if (source.dynamic || posix.isAbsolute(kept)) continue;
      touched.writes.push({
        ...into,
        raw: `${into.raw}/${kept}`,
        value: posix.join(into.value, kept),
        tree: 'some',
      });
    }
  if (!recursive || into === undefined) return;
  // A folder copied or moved lands at DEST/NAME when DEST is a folder, or is DEST when DEST is
  // new; rsync copies what a source ending in `/` holds into DEST itself. What it holds is written
  // under names the line does not show.
  const folder = /^\.{1,2}\/*$/.test(into.value) || target !== undefined;
  // `cp -r src/. dest` copies what src holds, as rsync does with `src/`.
  const contents =
    sources.some((w) => posix.basename(w.value) === '.' || w.value.endsWith('/.')) ||
    (inv.program === 'rsync' && sources.some((w) => w.value.endsWith('/')));
  if (contents || !folder || into.dynamic) touched.writes.push({ ...into, tree: 'some' });
  for (const source of sources) {
    const name = posix.basename(source.value);
    if (source.dynamic || into.dynamic || name === '' || name === '.' || name === '..') continue;
    touched.writes.push({
      ...into,
      raw: `${into.raw}/${name}`,
      value: posix.join(into.value, name),
      tree: 'some',
    });
  }
}

/** A file named only by what the line does not show (a config file's options, a command's input). */
function unknownWord(what: string): ShellWord {
  return {
    raw: `<${what}>`,
    value: `$${what.toUpperCase().replace(/\W+/g, '_')}`,
    dynamic: true,
    glob: false,
    tilde: false,
  };
}

/**
 * curl's files: `-o`, `-D`, `--trace`, `--stderr`, `--etag-save`, `--libcurl`, `--hsts`, `--alt-svc`
 * written, `-O` here, and what lands under `--output-dir`; `-T`, `-K` and `@file` data read.
 */
function curl(inv: Invocation, touched: Touched): void {
  const { options, operands, words } = readOptions(inv.args, optionTableFor('curl'));
  pushAll(
    touched.writes,
    values(words, 'output', 'cookie-jar', 'dump-header', 'trace', 'trace-ascii', 'stderr', 'etag-save'),
    values(words, 'libcurl', 'hsts', 'alt-svc'),
  );
  pushAll(touched.writes, reaching('some', values(words, 'output-dir')));
  // -O names the file after the URL's last segment, in --output-dir (read above) or here.
  if ((options.has('remote-name') || options.has('remote-name-all')) && !options.has('output-dir'))
    for (const url of [...operands, ...values(words, 'url')]) {
      const name = url.value.split(/[?#]/)[0]?.split('/').pop() ?? '';
      if (!url.dynamic && name !== '') touched.writes.push({ ...url, value: name });
    }
  pushAll(touched.reads, values(words, 'upload-file', 'config'));
  // A config file holds options the line does not show (`output = FILE`): it may write anywhere.
  if (options.has('config')) touched.writes.push(unknownWord('curl config'));
  for (const data of values(words, 'data', 'data-binary', 'data-urlencode', 'form', 'json', 'data-ascii')) {
    const at = data.value.indexOf('@');
    if (at < 0 || (at > 0 && !/^[\w-]*=?$/.test(data.value.slice(0, at)))) continue;
    const file = data.value.slice(at + 1).split(';')[0] ?? '';
    if (file !== '' && file !== '-') touched.reads.push({ ...data, value: file });
  }
}

function programEffects(inv: Invocation, touched: Touched): void {
  const p = inv.program;
  if (READERS.has(p)) {
    pushAll(touched.reads, readOptions(inv.args, optionTableFor(p)).operands);
    return;
  }
  if (WRITERS.has(p)) {
    const { options, operands } = readOptions(inv.args, p === 'rm' ? optionTableFor(p) : undefined);
    pushAll(touched.writes, p === 'rm' && options.has('recursive') ? reaching('all', operands) : operands);
    return;
  }
  if (EDITORS.has(p)) {
    const files = readOptions(inv.args).operands.filter((w) => !w.value.startsWith('+'));
    pushAll(touched.reads, files);
    pushAll(touched.writes, files);
    return;
  }
  if (CHANGERS.has(p)) {
    // GNU chmod takes a mode that starts with `-` where an option could be (`chmod -w f`, `-rwx`):
    // such a word is the mode, and every operand a file; so are they all with `--reference`.
    const mode = (w: ShellWord) => p === 'chmod' && /^-[rwxXstugoa=+,0-7]+$/.test(w.value);
    const { options, operands } = readOptions(
      inv.args.filter((w) => !mode(w)),
      optionTableFor(p),
    );
    const given = inv.args.some(mode) || options.has('reference');
    const files = given ? operands : operands.slice(1);
    pushAll(touched.writes, options.has('recursive') ? reaching('all', files) : files);
    return;
  }
  const patternFirst = PATTERN_FIRST.get(p);
  if (patternFirst !== undefined) {
    const { options, operands, words } = readOptions(inv.args, optionTableFor(p));
    const given = patternFirst.some((o) => options.has(o));
    const files = operands.slice(given ? 0 : 1).filter((w) => !/^[A-Za-z_]\w*=/.test(w.value));
    pushAll(touched.reads, files, values(words, 'file', '-f', '--file'));
    return;
  }
  const scripted = scriptProgramEffects(p, inv.args);
  if (scripted !== undefined) {
    pushAll(touched.reads, scripted.reads);
    pushAll(touched.writes, scripted.writes);
    return;
  }
  if (treeEffects(inv, touched)) return;
  if (COMPRESSORS.has(p)) {
    // In place: FILE becomes FILE.gz (or back), beside it, unless the output goes to stdout or
    // the files are only tested or listed.
    // (`-l` lists, except to lz4, where it picks the legacy format and writes.)
    const only = p === 'lz4' || p === 'unlz4' ? /^-[A-Za-z]*[ct]/ : /^-[A-Za-z]*[ctl]/;
    if (inv.args.some((w) => only.test(w.value) || /^--(?:stdout|to-stdout|test|list)$/.test(w.value)))
      return;
    const files = readOptions(inv.args).operands;
    const recursive = inv.args.some((w) => /^-[A-Za-z]*r/.test(w.value) || w.value === '--recursive');
    pushAll(touched.reads, files);
    pushAll(touched.writes, recursive ? reaching('all', files) : files);
    // zstd writes its outputs under --output-dir-flat=DIR or --output-dir-mirror=DIR.
    for (const w of inv.args) {
      const dir = /^--output-dir-(?:flat|mirror)=(.*)$/.exec(w.value)?.[1];
      if (dir !== undefined && dir !== '') touched.writes.push({ ...w, value: dir, tree: 'some' });
    }
    return;
  }
  if (p === 'mktemp') {
    // A new file (or folder, -d) in -p DIR / --tmpdir=DIR, or where its template says.
    const { operands, words } = readOptions(inv.args, optionTableFor(p));
    const template = operands[0];
    const dir = values(words, '-p', 'tmpdir')[0];
    if (dir !== undefined)
      touched.writes.push({ ...dir, value: posix.join(dir.value, template?.value ?? 'tmp.*'), glob: true });
    else if (template?.value.includes('/'))
      touched.writes.push({ ...template, value: template.value.replace(/X{3,}$/, '*'), glob: true });
    return;
  }
  switch (p) {
    case 'cp':
    case 'mv':
    case 'ln':
    case 'install':
    case 'rsync':
    case 'scp': {
      copyLike(inv, touched);
      return;
    }
    case 'tee':
    case 'sponge':
    case 'truncate': {
      const { operands, words } = readOptions(inv.args, optionTableFor(p));
      pushAll(touched.reads, values(words, 'reference'));
      pushAll(touched.writes, operands);
      return;
    }
    case 'iconv':
    case 'shuf': {
      const { options, operands, words } = readOptions(inv.args, optionTableFor(p));
      // shuf -e takes its operands as lines, -i a range: no file read.
      if (!options.has('echo') && !options.has('input-range')) pushAll(touched.reads, operands);
      pushAll(touched.writes, values(words, 'output'));
      return;
    }
    case 'dd':
      for (const w of inv.args) {
        if (w.value.startsWith('if=')) touched.reads.push({ ...w, value: w.value.slice(3) });
        if (w.value.startsWith('of=')) touched.writes.push({ ...w, value: w.value.slice(3) });
      }
      return;
    case 'sort':
    case 'sdiff': {
      const { operands, words } = readOptions(inv.args, optionTableFor(p));
      pushAll(touched.reads, operands);
      pushAll(touched.writes, values(words, 'output'));
      return;
    }
    // uniq INPUT [OUTPUT], xxd [INFILE [OUTFILE]], link FILE1 FILE2 (FILE2: a new name of FILE1).
    case 'uniq':
    case 'xxd':
    case 'link': {
      const { operands } = readOptions(inv.args, optionTableFor(p));
      pushAll(touched.reads, operands.slice(0, 1));
      pushAll(touched.writes, operands.slice(1, 2));
      return;
    }
    case 'curl': {
      curl(inv, touched);
      return;
    }
    case 'zip': {
      // zip [options] ARCHIVE [FILE…]: the archive (or `--out`'s) is written, the files read, and
      // with -m/--move deleted once stored (with -r, whole folders); `-@` takes more names from
      // the input. `-x`/`-i` take patterns up to the next option.
      let patterns = false;
      const kept = inv.args.filter((w) => {
        if (/^(?:-[xi]|--exclude|--include)$/.test(w.value)) {
          patterns = true;
          return false;
        }
        if (patterns && !w.value.startsWith('-')) return false;
        patterns = false;
        return true;
      });
      const { options, operands, words } = readOptions(kept, optionTableFor(p));
      const files = operands.slice(1);
      if (options.has('-@')) files.push({ raw: STDIN, value: '', dynamic: true, glob: false, tilde: false });
      pushAll(touched.writes, operands.slice(0, 1), values(words, 'out', 'logfile-path'));
      // `-lf FILE`: its log file (an option of two letters).
      inv.args.forEach((w, i) => {
        const next = inv.args[i + 1];
        if (w.value === '-lf' && next !== undefined) touched.writes.push(next);
      });
      pushAll(touched.reads, files);
      if (options.has('move'))
        pushAll(touched.writes, options.has('recurse-paths') ? reaching('all', files) : files);
      return;
    }
    case 'wget': {
      const { options, words } = readOptions(inv.args, optionTableFor('wget'));
      pushAll(
        touched.writes,
        values(words, 'output-document', 'output-file', 'append-output', 'save-cookies'),
      );
      // --warc-file=NAME writes NAME.warc.gz (and NAME-meta.warc.gz); -e runs .wgetrc commands,
      // which may name any file.
      for (const w of values(words, 'warc-file'))
        touched.writes.push({ ...w, value: `${w.value}*`, glob: true });
      if (options.has('execute')) touched.writes.push(unknownWord('wget commands'));
      // -P DIR: what it fetches lands under DIR, named by the server's paths.
      pushAll(touched.writes, reaching('some', values(words, 'directory-prefix')));
      pushAll(touched.reads, values(words, 'input-file', 'post-file', 'body-file'));
      return;
    }
    case 'split':
    case 'csplit': {
      // split [FILE [PREFIX]], csplit [-f PREFIX] FILE PATTERN…: the pieces are PREFIX followed by
      // a suffix (`x` and `xx` when no prefix is given).
      const { operands, words } = readOptions(inv.args, optionTableFor(p));
      pushAll(touched.reads, operands.slice(0, 1));
      const named = p === 'split' ? operands[1] : values(words, 'prefix')[0];
      const prefix = named ?? { ...plainWord(p === 'split' ? 'x' : 'xx') };
      touched.writes.push({ ...prefix, value: `${prefix.value}*`, glob: true });
      return;
    }
  }
  toolEffects(inv, touched);
}

function redirectionEffects(command: SimpleCommand, touched: Touched): void {
  for (const r of command.redirections) {
    if (r.op === '<') touched.reads.push(r.target);
    else if (r.op === '<>') {
      touched.reads.push(r.target);
      touched.writes.push(r.target);
    } else if (r.op === '>&' && /^(?:\d+|-)$/.test(r.target.value)) continue;
    else if (r.op.includes('>')) touched.writes.push(r.target);
  }
}

/**
 * A path that reopens one of the process's descriptors (`/dev/fd/3`, `/dev/stdout`,
 * `/proc/self/fd/3`), or a name under one (`/dev/fd/3/x` when 3 is a folder): the descriptor's
 * number, or -1 for another process's (`/proc/PID/fd/N`).
 */
function descriptorOf(path: string): number | undefined {
  const m =
    /^\/(?:dev\/(stdin|stdout|stderr|fd\/(\d+))|proc\/(self|thread-self|\d+)\/fd\/(\d+))(?:\/|$)/.exec(
      posix.normalize(path),
    );
  if (m === null) return undefined;
  if (m[1] !== undefined)
    return m[2] !== undefined ? Number(m[2]) : ['stdin', 'stdout', 'stderr'].indexOf(m[1]);
  return m[3] === 'self' || m[3] === 'thread-self' ? Number(m[4]) : -1;
}

/** A file a line opens by redirection, with the descriptors it opens it on and its command's folder. */
export interface OpenedFile {
  word: ShellWord;
  cwd: string | undefined;
  fds: number[];
}

/**
 * The files a line opens by redirection (`3<file`, `> file`, `<> file`): what a write to a
 * descriptor path may reach (`exec 3<protected/x; echo hi > /dev/fd/3`).
 */
export function openedFiles(commands: readonly SimpleCommand[]): OpenedFile[] {
  const out: OpenedFile[] = [];
  for (const command of commands)
    for (const r of command.redirections) {
      if (r.op.startsWith('<<') || r.op === '>&' || r.op === '<&') continue;
      if (r.target.value === '' || NOT_A_FILE.test(r.target.value)) continue;
      const fds =
        r.fd !== undefined ? [r.fd] : r.op.startsWith('&') ? [1, 2] : r.op.startsWith('<') ? [0] : [1];
      out.push({ word: r.target, cwd: command.cwd, fds });
    }
  return out;
}

/**
 * The descriptors a command writes through by name (`> /dev/fd/3`, `tee /dev/stdout`, `rm
 * /dev/fd/3/x`, any write while it runs in such a folder), from its writes devices included; -1 for
 * one it cannot tell. Empty for most commands.
 */
function descriptorsOf(command: SimpleCommand, writes: readonly ShellWord[]): number[] {
  const inFolder = command.cwd === undefined ? undefined : descriptorOf(command.cwd);
  if (inFolder !== undefined) return writes.length > 0 ? [inFolder] : [];
  const out: number[] = [];
  for (const w of writes) {
    if (w.dynamic || !posix.isAbsolute(w.value)) continue;
    const fd = descriptorOf(w.value);
    if (fd !== undefined) out.push(fd);
  }
  return out;
}

/**
 * The files one simple command reads and writes (words as written, device files left out), and the
 * descriptors it writes through by name (`descriptors`, see descriptorsOf).
 */
export function commandFileEffects(command: SimpleCommand): Touched & { descriptors: number[] } {
  const touched = rawEffects(command);
  // Words `xargs` adds from its input are files named only at run time: any file may be among them.
  const named = <W extends ShellWord>(w: W): W => (w.raw === STDIN ? { ...w, value: '$XARGS_INPUT' } : w);
  const keep = (w: ShellWord | undefined): w is ShellWord =>
    w !== undefined && w.value !== '' && !NOT_A_FILE.test(w.value);
  return {
    reads: touched.reads.map(named).filter(keep),
    writes: touched.writes.map(named).filter(keep),
    descriptors: descriptorsOf(command, touched.writes),
  };
}

/** What a command touches, devices and descriptors included. */
function rawEffects(command: SimpleCommand): Touched {
  const touched: Touched = { reads: [], writes: [] };
  redirectionEffects(command, touched);
  const inv = command.invocation;
  if (inv !== undefined && command.opaque === undefined) programEffects(inv, touched);
  if (inv !== undefined && PATCH_PROGRAMS.has(inv.program)) {
    const patch = patchText(inv.args, command.redirections, false) ?? '';
    // Codex applies `cd DIR && apply_patch` in DIR as written: the files there are written too.
    const written = patchFolderAsWritten(command) ?? undefined;
    for (const path of patchPaths(patch)) {
      touched.writes.push({ raw: path, value: path, dynamic: false, glob: false, tilde: false });
      if (written === undefined || posix.isAbsolute(path)) continue;
      const there = posix.join(written, path);
      touched.writes.push({ raw: there, value: there, dynamic: false, glob: false, tilde: false });
    }
  }
  return touched;
}

/** How shell.ts marks the words xargs adds from its input. */
const STDIN = '<stdin>';

/**
 * What a shell command line reads and writes, for the receipt and the live boundary: each path as
 * written with the directory it is relative to (`cd` followed). `cwd` is the call's directory.
 */
export function shellFileEffects(command: string, cwd?: string): ShellFileEffects {
  const analysis = splitShellCommand(command);
  const out: ShellFileEffects = { reads: [], writes: [], complete: analysis.complete, opaque: false };
  for (const simple of analysis.commands) {
    if (simple.opaque !== undefined) out.opaque = true;
    const base =
      simple.cwd === undefined ? undefined : cwd === undefined ? simple.cwd : posix.resolve(cwd, simple.cwd);
    const via = simple.invocation?.program ?? 'redirection';
    const effect = (w: ShellWord, by: string): FileEffect => ({
      path: w.value,
      cwd: base,
      dynamic: w.dynamic,
      glob: w.glob,
      via: by,
    });
    const all = commandFileEffects(simple);
    // The receipt lists files the line names; what xargs reads from its input is not one.
    const touched = {
      reads: all.reads.filter((w) => w.raw !== STDIN),
      writes: all.writes.filter((w) => w.raw !== STDIN),
    };
    const redirected = new Set(simple.redirections.map((r) => r.target));
    for (const w of touched.reads) out.reads.push(effect(w, redirected.has(w) ? 'redirection' : via));
    for (const w of touched.writes) out.writes.push(effect(w, redirected.has(w) ? 'redirection' : via));
  }
  return out;
}
