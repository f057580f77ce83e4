/**
 * Programs outside the reader and writer tables whose files follow a short rule of their manual:
 * key, archive and object tools, `cmake -E`, `python -m MODULE`, sqlite3's database, renamers, and
 * the output option (`-o FILE`, `--output FILE`, `-out FILE`) of compilers, linkers, openssl, gpg
 * and converters. Over-approximations are kept where a rule would need the whole manual (every
 * operand of `strip`, `objcopy` or `python -m MODULE` may be written).
 */
import { posix } from 'node:path';
import { plainWord, pushAll, reaching, type Touched } from './effect-words.js';
import type { Invocation } from './shell.js';
import type { ShellWord } from './shell-grammar.js';
import { readOptions } from './shell-options.js';

/**
 * Programs whose `-o`/`--output`/`-out` option names a file they write: compilers, assemblers and
 * linkers, openssl, gpg, document converters. (Elsewhere `-o` is an option of another kind: `ssh -o
 * OPTION`, `ps -o FORMAT`, `kubectl -o yaml`.)
 */
const OUTPUT_PROGRAMS = new Set(
  'gcc g++ cc c++ clang clang++ cpp tcc zig ld ld.bfd ld.gold ld.lld lld as nasm yasm rustc go javac kotlinc ghc gfortran gnatmake swiftc dmd ldc2 nim openssl gpg gpg2 pandoc xelatex pdflatex wkhtmltopdf convert magick dot uglifyjs terser esbuild'.split(
    ' ',
  ),
);
/** Options that name an output file in those programs. */
const OUTPUT_OPTIONS = new Set(['-o', '--output', '--out', '-out', '-keyout', '--output-file', '-output']);
const OUTPUT_ATTACHED = /^(?:--output|--out|--output-file|-out|-keyout)=(.+)$/;
/** Renamers: every operand may be a file renamed (util-linux `rename FROM TO FILE…`, perl's `rename EXPR FILE…`). */
const RENAMERS = new Set(['rename', 'rename.ul', 'prename', 'file-rename', 'perl-rename']);
/** Tools that rewrite an object file in place unless told where to write. */
const OBJECT_TOOLS = new Set(['strip', 'objcopy', 'ranlib']);
const HERE = plainWord('.');

const operandsOf = (args: readonly ShellWord[]): ShellWord[] => readOptions(args).operands;

/** The values of output options (`-o FILE`, `--output=FILE`, `-out FILE`). */
function outputs(args: readonly ShellWord[]): ShellWord[] {
  const out: ShellWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as ShellWord;
    const attached = OUTPUT_ATTACHED.exec(w.value)?.[1];
    if (attached !== undefined) out.push({ ...w, value: attached });
    else if (OUTPUT_OPTIONS.has(w.value) && args[i + 1] !== undefined) out.push(args[++i] as ShellWord);
  }
  return out;
}

/** Modules that write none of their operands (test runners, linters, checkers, servers). */
const READING_MODULES = new Set([
  'pytest',
  'mypy',
  'flake8',
  'pylint',
  'pyflakes',
  'pycodestyle',
  'pydocstyle',
  'bandit',
  'unittest',
  'doctest',
  'http.server',
  'pydoc',
  'timeit',
  'tox',
  'nox',
  'coverage',
  'pdb',
  'site',
  'sysconfig',
  'platform',
  'tabnanny',
  'json.tool',
  'ensurepip',
]);
/**
 * Formatters that rewrite their operands, unless an option only checks (`checks`); autopep8 only
 * with `-i`/`--in-place` (`inPlace`).
 */
const FORMATTING_MODULES: ReadonlyMap<string, { checks?: RegExp; inPlace?: RegExp }> = new Map([
  ['black', { checks: /^--(?:check|diff)$/ }],
  ['isort', { checks: /^(?:--check-only|--check|-c|--diff)$/ }],
  ['autopep8', { inPlace: /^(?:-i|--in-place)$/ }],
  ['yapf', { checks: /^(?:--diff|-d)$/ }],
]);

/** `pip … --target DIR`, `-t DIR`, `--root`, `--prefix`, `download -d DIR`: where it writes. */
function pipWrites(rest: readonly ShellWord[]): ShellWord[] {
  const out: ShellWord[] = [];
  rest.forEach((w, i) => {
    const attached = /^--(?:target|root|prefix|dest|src)=(.+)$/.exec(w.value)?.[1];
    if (attached !== undefined) out.push({ ...w, value: attached });
    else if (/^(?:-t|--target|--root|--prefix|-d|--dest|--src)$/.test(w.value) && rest[i + 1] !== undefined)
      out.push(rest[i + 1] as ShellWord);
  });
  return out;
}

/**
 * `python -m MODULE ARGS…`: what the module writes. Checkers write nothing they name; pip writes
 * where `--target`/`--root`/`--prefix` say; formatters rewrite their operands unless checking
 * (autopep8 only with `-i`/`--in-place`); zipfile and tarfile write the archive of `-c`, and extract
 * (`-e`) into the folder given, or here (tarfile); any other module (gzip, venv, compileall,
 * py_compile, …) may write every operand.
 */
function pythonModule(args: readonly ShellWord[], touched: Touched): boolean {
  const at = args.findIndex((w) => w.value === '-m' || /^-m./.test(w.value));
  if (at < 0) return false;
  const flag = args[at] as ShellWord;
  const module = flag.value === '-m' ? args[at + 1]?.value : flag.value.slice(2);
  const rest = args.slice(flag.value === '-m' ? at + 2 : at + 1);
  const operands = operandsOf(rest);
  if (module === undefined || READING_MODULES.has(module)) return true;
  if (module === 'pip' || module === 'pip3') {
    pushAll(touched.writes, reaching('some', pipWrites(rest)));
    return true;
  }
  const formatter = FORMATTING_MODULES.get(module);
  if (formatter !== undefined) {
    const { checks, inPlace } = formatter;
    const rewrites =
      (inPlace === undefined || rest.some((w) => inPlace.test(w.value))) &&
      (checks === undefined || !rest.some((w) => checks.test(w.value)));
    if (rewrites) pushAll(touched.writes, reaching('all', operands));
    return true;
  }
  if (module === 'zipfile' || module === 'tarfile') {
    const create = rest.findIndex((w) => w.value === '-c' || w.value === '--create');
    const extract = rest.findIndex((w) => w.value === '-e' || w.value === '--extract');
    if (create >= 0 && rest[create + 1] !== undefined) touched.writes.push(rest[create + 1] as ShellWord);
    if (extract >= 0) {
      const into = rest[extract + 2];
      touched.writes.push({ ...(into ?? HERE), tree: 'some' });
    }
    return true;
  }
  pushAll(touched.writes, reaching('some', operands), outputs(rest));
  return true;
}

/** What the programs above write; false when `inv` is none of them (and has no output option). */
export function toolEffects(inv: Invocation, touched: Touched): boolean {
  const { program: p, args } = inv;
  if (/^(?:python|pypy)\d*(?:\.\d+)*$/.test(p)) return pythonModule(args, touched);
  if (RENAMERS.has(p) || p === 'fallocate') {
    pushAll(touched.writes, operandsOf(args));
    return true;
  }
  if (OBJECT_TOOLS.has(p)) {
    pushAll(touched.writes, operandsOf(args), outputs(args));
    return true;
  }
  if (p === 'ssh-keygen') {
    // -f FILE: the key, and FILE.pub beside it.
    args.forEach((w, i) => {
      const file = args[i + 1];
      if (w.value === '-f' && file !== undefined)
        touched.writes.push(file, { ...file, value: `${file.value}.pub` });
    });
    return true;
  }
  if (p === 'cmake' && args[0]?.value === '-E') {
    // cmake -E COMMAND ARGS…: rm, copy, touch, make_directory, rename, tar, … act on ARGS.
    pushAll(touched.writes, reaching('all', args.slice(2)));
    if (args[1]?.value === 'tar') touched.writes.push({ ...HERE, tree: 'some' });
    return true;
  }
  if (p === 'ar') {
    // ar KEY ARCHIVE [MEMBER…]: the archive is written; `x` extracts its members here.
    const [key, archive] = args;
    if (archive !== undefined) touched.writes.push(archive);
    if (key !== undefined && /x/.test(key.value)) touched.writes.push({ ...HERE, tree: 'some' });
    return true;
  }
  if (p === 'sqlite3') {
    // sqlite3 [OPTIONS] FILE [SQL…]: the database file is opened to write (and created).
    const file = operandsOf(args)[0];
    if (file !== undefined && file.value !== ':memory:' && posix.basename(file.value) !== '')
      touched.writes.push(file);
    return true;
  }
  if (!OUTPUT_PROGRAMS.has(p)) return false;
  // Every word after the program: a tool with subcommands (`go build -o FILE`) keeps its options
  // out of `args`.
  const out = outputs(inv.argv.slice(1));
  pushAll(touched.writes, out);
  return out.length > 0;
}
