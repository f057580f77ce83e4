/**
 * git settings given on the line that make git run a program the line does not show: `-c KEY=VALUE`
 * and `--config-env=KEY=VAR` (git(1)), `--exec-path=DIR`, and the environment the line gives git
 * (`GIT_EXTERNAL_DIFF=…`, `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_N`, `GIT_PAGER` …). Many settings name
 * a program (git-config(1): `alias.*` with `!`, `core.fsmonitor`, `core.pager`, `diff.external`,
 * `filter.*.clean`, `credential.helper`, `core.hooksPath` …), so the settings are judged against the
 * ones that name none: any other makes the call opaque.
 */

/** Sections whose every key is data (names, colours, advice). */
const DATA_SECTIONS = new Set([
  'user',
  'author',
  'committer',
  'color',
  'advice',
  'column',
  'i18n',
  'feature',
]);

/** Keys (lower case, a subsection dropped: `branch.main.remote` is `branch.remote`) that name no program. */
const DATA_KEYS = new Set(
  `init.defaultbranch safe.directory core.quotepath core.autocrlf core.safecrlf core.eol core.filemode
  core.ignorecase core.precomposeunicode core.abbrev core.commentchar core.commentstring core.whitespace
  core.logallrefupdates core.symlinks core.untrackedcache core.preloadindex core.checkstat core.trustctime
  core.compression core.bigfilethreshold commit.gpgsign commit.verbose commit.status commit.cleanup
  tag.gpgsign tag.sort pull.rebase pull.ff push.default push.autosetupremote push.followtags fetch.prune
  fetch.parallel merge.conflictstyle merge.ff merge.log merge.renamelimit merge.autostash rebase.autostash
  rebase.autosquash rebase.updaterefs rebase.abbreviatecommands rebase.stat diff.noprefix diff.renames
  diff.algorithm diff.mnemonicprefix diff.relative diff.context diff.interhunkcontext diff.colormoved
  diff.indentheuristic diff.statgraphwidth diff.dirstat log.date log.decorate log.abbrevcommit log.follow
  log.showroot log.showsignature format.pretty status.short status.branch status.showuntrackedfiles
  status.relativepaths status.aheadbehind status.renames gc.auto gc.autodetach maintenance.auto
  http.sslverify http.postbuffer http.version protocol.version branch.autosetupmerge branch.autosetuprebase
  branch.sort branch.remote branch.merge grep.linenumber grep.patterntype checkout.defaultremote
  clone.defaultremotename core.longpaths core.fscache http.extraheader http.proxy http.lowspeedlimit
  http.lowspeedtime versionsort.suffix versionsort.prereleasesuffix rerere.enabled rerere.autoupdate
  tag.forcesignannotated fetch.recursesubmodules submodule.recurse status.submodulesummary
  diff.submodule diff.ignoresubmodules push.recursesubmodules pull.twohead gpg.format`.split(/\s+/),
);

/** Values of a pager, editor or fsmonitor setting that run no program (`true` and `:` edit nothing). */
const NO_PROGRAM = /^(?:|cat|true|false|yes|no|on|off|[01]|:)$/i;

/** Variables whose value is a pager or editor. */
const PAGER_OR_EDITOR = /^(?:GIT_PAGER|PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|EDITOR|VISUAL)$/;

/** Variables that make git run a program, read another configuration or write a trace file. */
const ENVIRONMENT =
  /^(?:GIT_(?:PAGER|EDITOR|SEQUENCE_EDITOR|EXTERNAL_DIFF|SSH|SSH_COMMAND|ASKPASS|PROXY_COMMAND|CONFIG|CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG_COUNT|CONFIG_PARAMETERS|CONFIG_KEY_\d+|EXEC_PATH|TEMPLATE_DIR|TRACE\w*|ALLOW_PROTOCOL|INDEX_FILE|DIR|WORK_TREE|OBJECT_DIRECTORY)|PAGER|EDITOR|VISUAL|SSH_ASKPASS)$/;

/** `GIT_TRACE*` values that trace to standard error, not to a file. */
const TRACE_TO_STDERR = /^(?:|[0-2]|true|false|yes|no|on|off)$/i;

/** A setting's key as git compares it: section and name in lower case, a subsection dropped. */
function keyOf(key: string): { section: string; name: string } {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  return { section: key.slice(0, first).toLowerCase(), name: key.slice(last + 1).toLowerCase() };
}

/** True when setting `key` to `value` (unknown: undefined) makes git run no program. */
function harmless(key: string, value: string | undefined): boolean {
  const { section, name } = keyOf(key);
  if (section === '' || name === '') return false;
  if (DATA_SECTIONS.has(section) || DATA_KEYS.has(`${section}.${name}`)) return true;
  const program =
    (section === 'core' && (name === 'pager' || name === 'editor' || name === 'fsmonitor')) ||
    (section === 'sequence' && name === 'editor') ||
    section === 'pager';
  return program && value !== undefined && NO_PROGRAM.test(value.trim());
}

/**
 * Why git, run with these global options (`-c`, `--config-env`, `--exec-path` values) and these
 * variables set for it, may run a program the line does not show; undefined when it cannot.
 */
export function gitRunsProgram(
  options: ReadonlyMap<string, readonly string[]>,
  variables: readonly { name: string; value: string }[],
): string | undefined {
  for (const setting of options.get('-c') ?? []) {
    const eq = setting.indexOf('=');
    const key = eq < 0 ? setting : setting.slice(0, eq);
    if (!harmless(key, eq < 0 ? 'true' : setting.slice(eq + 1)))
      return `git -c ${key} may run a program the line does not show`;
  }
  for (const setting of options.get('config-env') ?? []) {
    const key = setting.slice(0, Math.max(0, setting.indexOf('=')));
    if (!harmless(key, undefined)) return `git --config-env=${key} may run a program the line does not show`;
  }
  if ((options.get('exec-path') ?? []).some((v) => v !== ''))
    return 'git --exec-path runs its commands from a folder the line names';
  const variable = variables.find(
    (v) =>
      ENVIRONMENT.test(v.name) &&
      !(PAGER_OR_EDITOR.test(v.name) && NO_PROGRAM.test(v.value.trim())) &&
      !(v.name.startsWith('GIT_TRACE') && TRACE_TO_STDERR.test(v.value.trim())),
  );
  return variable === undefined
    ? undefined
    : `git runs with ${variable.name} set, which may run a program the line does not show`;
}

/** Subcommand options whose value (or, for `bisect run`, the words after) is a command git runs. */
const RUNS: ReadonlyMap<string, readonly string[]> = new Map([
  ['fetch', ['--upload-pack']],
  ['pull', ['--upload-pack']],
  ['clone', ['--upload-pack', '-u', '--template']],
  ['ls-remote', ['--upload-pack']],
  ['archive', ['--exec']],
  ['push', ['--receive-pack', '--exec']],
  ['send-pack', ['--receive-pack', '--exec']],
  ['grep', ['-O', '--open-files-in-pager']],
  ['difftool', ['-x', '--extcmd']],
  ['rebase', ['-x', '--exec']],
  ['init', ['--template']],
]);

/** Subcommands that run a command given on the line or from the repository (`bisect run`, `submodule foreach`, `filter-branch`). */
const RUN_SUBCOMMANDS: ReadonlyMap<string, string | undefined> = new Map([
  ['bisect', 'run'],
  ['submodule', 'foreach'],
  ['filter-branch', undefined],
  ['filter-repo', undefined],
]);

/**
 * Why a git subcommand with these words may run a program the line does not judge: an option
 * that names a command (`fetch --upload-pack=…`, `rebase -x …`, `grep -O…`; a long option in any
 * unambiguous abbreviation, as git accepts it), `bisect run`, `submodule foreach`, or `git config`
 * setting a key that names a program (it runs at a later git command).
 */
export function gitSubcommandRuns(
  subcommand: string,
  args: readonly { value: string }[],
): string | undefined {
  if (RUN_SUBCOMMANDS.has(subcommand)) {
    const word = RUN_SUBCOMMANDS.get(subcommand);
    if (word === undefined || args.some((a) => a.value === word)) return `git ${subcommand} runs commands`;
  }
  for (const option of RUNS.get(subcommand) ?? []) {
    const hit = args.find((a) =>
      option.startsWith('--')
        ? a.value.length > 3 && option.startsWith(a.value.split('=')[0] as string)
        : new RegExp(`^-[A-Za-z]*${option.slice(1)}`).test(a.value) && !a.value.startsWith('--'),
    );
    if (hit !== undefined) return `git ${subcommand} ${option} runs a command`;
  }
  if (subcommand === 'clone') {
    // clone -c KEY=VALUE / --config KEY=VALUE sets the new repository's configuration before its
    // checkout runs (hooks, filters).
    for (let i = 0; i < args.length; i++) {
      const v = (args[i] as { value: string }).value;
      const setting =
        v === '-c' || v === '--config' ? args[i + 1]?.value : /^(?:--config=|-c)(.+)$/.exec(v)?.[1];
      if (setting === undefined) continue;
      const eq = setting.indexOf('=');
      const key = eq < 0 ? setting : setting.slice(0, eq);
      if (!harmless(key, eq < 0 ? 'true' : setting.slice(eq + 1)))
        return `git clone -c ${key} may run a program the line does not show`;
    }
  }
  if (subcommand === 'config') {
    // git config [--file F …] KEY VALUE, or git config set KEY VALUE: a key that names a program.
    const positional: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const v = (args[i] as { value: string }).value;
      if (/^(?:-f|--file|--blob|--type|--default|--comment|--value)$/.test(v)) i++;
      else if (!v.startsWith('-')) positional.push(v);
    }
    const [key, value] = positional[0] === 'set' ? positional.slice(1) : positional;
    if (key !== undefined && value !== undefined && positional[0] !== 'get' && !harmless(key, value))
      return `git config sets ${key}, which may run a program at a later git command`;
  }
  return undefined;
}
