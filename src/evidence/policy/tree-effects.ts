/**
 * Commands that write a folder as a whole, under names the line does not show: archives unpacked
 * (`tar -x`, `unzip`, `cpio -i`), `find -delete`, `patch` reading a patch, and git's working-tree
 * writers (docs/policy.md, "Whole folders").
 */

import { posix } from 'node:path';
import { pushAll, reaching, type Touched, tarWords, values, type WrittenWord } from './effect-words.js';
import type { Invocation } from './shell.js';
import type { ShellWord } from './shell-grammar.js';
import { GLOBAL_OPTIONS, optionTableFor, readOptions } from './shell-options.js';

/** The folder a command runs in, written though the line does not name it. */
const HERE: WrittenWord = {
  raw: '.',
  value: '.',
  dynamic: false,
  glob: false,
  tilde: false,
  implied: true,
};

/** The effects of a command that writes a folder as a whole; false for every other program. */
export function treeEffects(inv: Invocation, touched: Touched): boolean {
  switch (inv.program) {
    case 'tar': {
      const { options, operands, words } = readOptions(tarWords(inv.args), optionTableFor('tar'));
      const archive = values(words, 'file');
      const creates = ['create', 'append', 'update', 'catenate'].some((o) => options.has(o));
      if (creates) pushAll(touched.writes, archive);
      else pushAll(touched.reads, archive);
      pushAll(touched.reads, values(words, 'files-from', 'exclude-from'));
      // The snapshot file of an incremental archive, the index and the volume number file are written.
      pushAll(touched.writes, values(words, 'listed-incremental', 'index-file', 'volno-file'));
      const directory = values(words, 'directory');
      // Names are relative to -C DIR; a list (-T) gives names the line does not show.
      const members = [
        ...operands.map((w) =>
          directory[0] === undefined || w.dynamic || posix.isAbsolute(w.value)
            ? w
            : { ...w, value: posix.join(directory[0].value, w.value) },
        ),
        ...(options.has('files-from')
          ? [{ ...(values(words, 'files-from')[0] as ShellWord), value: '$TAR_LIST', dynamic: true }]
          : []),
      ];
      if (creates) pushAll(touched.reads, members);
      // --remove-files deletes what it stored, folders whole.
      if (creates && options.has('remove-files')) pushAll(touched.writes, reaching('all', members));
      else if (options.has('extract')) {
        // Members named on the line are written (each may be a folder); without them, renamed by
        // --transform, or matched anywhere (--wildcards, --no-anchored), whatever the archive
        // holds, under -C DIR or here.
        const anywhere = ['transform', 'wildcards', 'no-anchored'].some((o) => options.has(o));
        const named = operands.length > 0 && !anywhere ? operands : [HERE];
        pushAll(touched.writes, reaching('some', directory[0] ? directory : named));
      }
      return true;
    }
    case 'unzip': {
      // unzip [-opts] ZIP [MEMBERS…] [-x XLIST] [-d EXDIR]: whatever the archive holds, under EXDIR or here.
      const at = inv.args.findIndex((w) => w.value === '-d' || /^-d./.test(w.value));
      const word = at < 0 ? undefined : inv.args[at]!;
      const exdir =
        word === undefined
          ? HERE
          : word.value === '-d'
            ? inv.args[at + 1]
            : { ...word, value: word.value.slice(2) };
      const valueAt = word?.value === '-d' ? at + 1 : -1;
      const zip = inv.args.find((w, i) => !w.value.startsWith('-') && i !== valueAt);
      if (zip !== undefined) touched.reads.push(zip);
      pushAll(touched.writes, reaching('some', exdir === undefined ? [HERE] : [exdir]));
      return true;
    }
    case 'cpio': {
      // cpio -i/--extract writes what the archive on its input holds, under -D DIR or here.
      const extract = inv.args.some((w) => /^-[^-]*i/.test(w.value) || w.value === '--extract');
      if (!extract) return true;
      const at = inv.args.findIndex((w) => w.value === '-D' || w.value.startsWith('--directory='));
      const dir =
        at < 0
          ? HERE
          : inv.args[at]!.value === '-D'
            ? inv.args[at + 1]
            : { ...inv.args[at]!, value: inv.args[at]!.value.slice('--directory='.length) };
      pushAll(touched.writes, reaching('some', [dir ?? HERE]));
      return true;
    }
    case 'git':
      gitEffects(inv, touched);
      return true;
    case 'find': {
      // -fprint FILE, -fprint0 FILE, -fls FILE, -fprintf FILE FORMAT: FILE is created when find
      // reads the expression, whether or not the action is reached.
      inv.args.forEach((w, i) => {
        const file = inv.args[i + 1];
        if (/^-f(?:print0?|ls|printf)$/.test(w.value) && file !== undefined) touched.writes.push(file);
      });
      // find P… EXPR -delete deletes what matches under each starting point (here when none).
      if (!inv.args.some((w) => w.value === '-delete' || w.dynamic)) return true;
      const first = inv.args.findIndex((w) => /^[-(!]/.test(w.value));
      const points = inv.args.slice(0, first < 0 ? inv.args.length : first);
      pushAll(touched.writes, reaching('some', points.length > 0 ? points : [HERE]));
      return true;
    }
    case 'patch': {
      // patch [ORIGINAL [PATCHFILE]]: ORIGINAL, or the files the patch names under -d DIR or here.
      const { operands, words } = readOptions(inv.args, optionTableFor('patch'));
      pushAll(touched.reads, values(words, 'input'), operands.slice(1, 2));
      pushAll(touched.writes, values(words, 'output', 'reject-file'));
      // Backups named PREFIX + the file's name (-B), or in the file's folder with -Y.
      for (const prefix of values(words, 'prefix', 'basename-prefix'))
        touched.writes.push({ ...prefix, value: `${prefix.value}*`, glob: true });
      const directory = values(words, 'directory');
      if (operands[0] !== undefined) touched.writes.push(operands[0]);
      else pushAll(touched.writes, reaching('some', directory.length > 0 ? directory : [HERE]));
      return true;
    }
  }
  return false;
}

/**
 * git subcommands that rewrite the working tree with content the line does not show (a branch, a
 * stash, a patch, a merge): each reaches some of the repository's working tree (`git clean` only
 * under where it runs), and the paths a command names are written whole (`git checkout REV --
 * protected/` restores everything under it). From each subcommand's manual.
 */
const GIT_TREE_WRITERS = new Set([
  'checkout',
  'switch',
  'reset',
  'merge',
  'pull',
  'rebase',
  'cherry-pick',
  'revert',
  'am',
  'apply',
  'stash',
  'clean',
  'read-tree',
  'checkout-index',
  'sparse-checkout',
]);
/** git stash subcommands that leave the tree as it is. */
const STASH_READERS = new Set(['list', 'show', 'create', 'store']);

/**
 * What git's own options before the subcommand say (git(1)): the folder it runs in — here, or where
 * its `-C DIR` options lead, each relative to the one before; a computed one is returned as the
 * word it is — and the folders `--git-dir` names, which git writes (the index, objects, refs).
 */
function gitGlobals(inv: Invocation): { at: ShellWord; gitDirs: ShellWord[] } {
  const global = inv.argv.slice(
    1,
    inv.subcommand === undefined ? undefined : inv.argv.length - inv.args.length - 1,
  );
  const { words } = readOptions(global, GLOBAL_OPTIONS.get('git'));
  let at: ShellWord = HERE;
  for (const dir of values(words, '-C'))
    at =
      dir.dynamic || posix.isAbsolute(dir.value) ? dir : { ...dir, value: posix.join(at.value, dir.value) };
  return { at, gitDirs: values(words, 'git-dir') };
}

function gitEffects(inv: Invocation, touched: Touched): void {
  const sub = inv.subcommand;
  const args = inv.args;
  const given = (...names: string[]) => args.some((w) => names.includes(w.value));
  const { at, gitDirs } = gitGlobals(inv);
  // Paths a subcommand names are relative to where git runs.
  const here = (w: ShellWord): ShellWord =>
    at === HERE || w.dynamic || posix.isAbsolute(w.value)
      ? w
      : { ...w, value: posix.join(at.value, w.value) };
  const operands = readOptions(args).operands.map(here);
  if (sub === 'mv' || sub === 'rm') {
    pushAll(touched.writes, operands);
    return;
  }
  if (sub === 'clone') {
    // git clone REPO [DIR]: DIR, or the repository's own name here (git-clone(1)).
    const [repo, dir] = operands;
    const name =
      repo === undefined ? '' : posix.basename(repo.value.replace(/\/+$/, '')).replace(/\.git$/, '');
    const target =
      dir ?? (repo === undefined || name === '' ? undefined : { ...repo, value: posix.join(at.value, name) });
    if (target !== undefined) touched.writes.push({ ...target, tree: 'some' });
    return;
  }
  // Files and folders git writes by name: an archive, a bundle, a patch series, a diff's output, a
  // new repository or worktree (git-archive(1), git-bundle(1), git-format-patch(1), git-diff(1),
  // git-init(1), git-worktree(1)).
  const output = args.flatMap((w, i) => {
    const m = /^--(?:output(?:-directory)?|export-marks|separate-git-dir|file)=(.*)$/.exec(w.value);
    if (m !== null) return [{ ...w, value: m[1] as string }];
    // `-oDIR` attached (format-patch, archive, bugreport, diagnose, mailsplit); not `diff -o`.
    if (/^-o./.test(w.value) && sub !== 'diff') return [{ ...w, value: w.value.slice(2) }];
    const takes =
      /^--(?:output|output-directory|separate-git-dir|file)$/.test(w.value) ||
      (w.value === '-o' && sub !== 'diff') ||
      (w.value === '-f' && (sub === 'config' || sub === 'credential-store'));
    return takes && args[i + 1] !== undefined ? [args[i + 1] as ShellWord] : [];
  });
  pushAll(touched.writes, reaching('some', output.map(here)));
  pushAll(touched.writes, reaching('some', gitDirs));
  // format-patch, bugreport and diagnose write their files where they run unless told otherwise.
  const named = {
    'format-patch': '[0-9][0-9][0-9][0-9]-*.patch',
    bugreport: 'git-bugreport-*',
    diagnose: 'git-diagnostics-*',
  }[sub ?? ''];
  if (named !== undefined && output.length === 0 && !given('--stdout'))
    touched.writes.push({ ...at, value: posix.join(at.value, named), glob: true });
  if (sub === 'bundle' && operands[0]?.value === 'create' && operands[1] !== undefined)
    touched.writes.push(operands[1]);
  if (sub === 'merge-file' && operands[0] !== undefined && !given('-p', '--stdout'))
    touched.writes.push(operands[0]);
  if (sub === 'mailinfo') pushAll(touched.writes, operands.slice(0, 2));
  if (sub === 'pack-objects' && operands[0] !== undefined)
    touched.writes.push({ ...operands[0], value: `${operands[0].value}-*`, glob: true });
  if (sub === 'worktree' && (operands[0]?.value === 'add' || operands[0]?.value === 'move')) {
    // worktree add [-b NEW] PATH, worktree move FROM TO: the last folder named (option values left out).
    const words = readOptions(args.slice(1), optionTableFor('git worktree')).operands.map(here);
    const path = operands[0].value === 'move' ? words[1] : words[0];
    if (path !== undefined) touched.writes.push({ ...path, tree: 'some' });
  }
  if (sub === 'init' || sub === 'init-db') {
    // DIR (made when missing) and the repository in DIR/.git.
    const dir = operands[0] ?? at;
    touched.writes.push(dir, {
      ...dir,
      value: posix.join(dir.value, '.git'),
      tree: 'some',
    });
  }
  if (sub === 'restore') {
    // The working tree unless only the index is restored (--staged without --worktree, in any
    // abbreviation git accepts: `--work`).
    const worktree = args.some(
      (w) => /^--wo(?:r(?:k(?:t(?:r(?:ee?)?)?)?)?)?$/.test(w.value) || /^-[A-Za-z]*W/.test(w.value),
    );
    if (given('--staged', '-S') && !worktree) return;
    pushAll(touched.writes, reaching('all', operands));
    return;
  }
  if (sub === undefined || !GIT_TREE_WRITERS.has(sub)) return;
  // A mixed or soft reset moves HEAD and the index only; these only check or list.
  // (Long options in any abbreviation git accepts: `--har`; a later option undoes an earlier one.)
  if (sub === 'reset' && !args.some((w) => /^--(?:ha(?:rd?)?|me(?:r(?:ge?)?)?|ke(?:ep?)?)$/.test(w.value)))
    return;
  if (
    sub === 'apply' &&
    given('--check', '--stat', '--numstat', '--summary', '--cached') &&
    !args.some((w) => /^--ap(?:p(?:ly?)?)?$/.test(w.value))
  )
    return;
  if (sub === 'clean') {
    const last = args.findLast((w) => /^(?:-n|--dry-run|--no-dry-run)$/.test(w.value));
    if (last !== undefined && last.value !== '--no-dry-run') return;
  }
  // The stash subcommand, when given, is the first word (`git stash -m list` pushes a stash).
  if (sub === 'stash' && STASH_READERS.has(args[0]?.value ?? '')) return;
  // `git checkout -b NEW` (also clustered: `-qb NEW`) makes a branch where HEAD is: nothing changes.
  // (With -f it overwrites local changes: a tree writer.)
  const newBranch =
    (given('--orphan') || args.some((w) => /^-[A-Za-z]*[bB]$/.test(w.value))) &&
    !args.some((w) => w.value === '--force' || /^-[A-Za-z]*f/.test(w.value));
  if (sub === 'checkout' && newBranch && operands.length <= 1) return;
  // Pathspecs (and, for checkout, what may be one) are written whole; the rest of the tree in part.
  const paths = sub === 'checkout' || sub === 'clean' || sub === 'checkout-index' ? operands : [];
  pushAll(touched.writes, reaching(sub === 'clean' ? 'some' : 'all', paths));
  // git clean starts from where it runs; every other one writes across the repository's tree.
  touched.writes.push({
    ...at,
    tree: 'some',
    ...(at === HERE ? { implied: true as const } : {}),
    ...(sub === 'clean' ? {} : { worktree: true as const }),
  });
}
