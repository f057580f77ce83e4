/**
 * Option tables of the commands patterns most often name, taken from their manuals (GNU coreutils
 * rm, cp, mv, ln, install, tee, truncate, chmod, chown; GNU sed, grep, tar, wget; curl; git and
 * git-push, git-reset, git-clean, git-branch, git-checkout, git-commit), and the one routine that
 * reads a command's options with them. Equal meaning gives equal names: `-r`, `-R` and
 * `--recursive` of rm are all `recursive`, so `rm -fr`, `rm -r -f` and `rm --recursive --force`
 * carry the same options as `rm -rf`. Documented in docs/policy.md, "Options".
 */

import type { ShellWord } from './shell-grammar.js';

export interface OptionTable {
  /** Short letter → the canonical names it sets (usually one; `git branch -D` sets two). */
  short: ReadonlyMap<string, readonly string[]>;
  /** Every long option by name → its canonical name. */
  long: ReadonlyMap<string, string>;
  /** Canonical names whose option takes a value (`-o FILE`, `--output FILE`, `--output=FILE`). */
  valued: ReadonlySet<string>;
  /** Canonical names whose value is optional and only ever attached (`--in-place=.bak`, `-i.bak`). */
  optional: ReadonlySet<string>;
  /** GNU getopt_long and git accept any unambiguous prefix of a long option (`--recur`). */
  abbreviate: boolean;
  /** Options end at the first operand (POSIX utilities, wrappers); otherwise GNU-style permutation. */
  stopAtOperand: boolean;
}

/**
 * Builds a table from a spec: space-separated entries `s` (short flag), `s,S:long` (shorts and
 * their long name), `long` (long only), each with a suffix `=` (takes a value) or `=?` (optional
 * attached value); `D>delete,force` makes a short letter set several names.
 */
export function optionTable(spec: string, options: { abbreviate?: boolean; stopAtOperand?: boolean } = {}) {
  const short = new Map<string, string[]>();
  const long = new Map<string, string>();
  const valued = new Set<string>();
  const optional = new Set<string>();
  for (const entry of spec.split(/\s+/).filter((e) => e !== '')) {
    const implied = /^(.)>(.+)$/.exec(entry);
    if (implied !== null) {
      short.set(implied[1] as string, (implied[2] as string).split(','));
      continue;
    }
    const m = /^(?:([^:=]+):)?([^:=]+?)(=\??)?$/.exec(entry);
    if (m === null) throw new Error(`option table: bad entry ${entry}`);
    const [, shorts, names = '', value] = m;
    const longs = shorts === undefined && names.length === 1 ? [] : names.split(',');
    const shortList = shorts !== undefined ? shorts.split(',') : longs.length === 0 ? [names] : [];
    const canonical = longs[0] ?? `-${names}`;
    for (const name of longs) long.set(name, canonical);
    for (const letter of shortList) short.set(letter, [canonical]);
    if (value === '=') valued.add(canonical);
    if (value === '=?') optional.add(canonical);
  }
  return {
    short,
    long,
    valued,
    optional,
    abbreviate: options.abbreviate ?? true,
    stopAtOperand: options.stopAtOperand ?? false,
  } satisfies OptionTable;
}

/** A command's words read with a table: canonical option names (with values) and operands. */
export interface ReadOptions {
  options: Map<string, string[]>;
  operands: ShellWord[];
  /** The words that gave each option its values, in order (an attached value: the word it is part of). */
  words: Map<string, ShellWord[]>;
  /** A word whose value is known only at run time stands among the options or operands. */
  dynamic: boolean;
}

const NO_TABLE = optionTable('');

/** The canonical name of a long option: exact, or (where the tool allows) its one unambiguous completion. */
function longName(table: OptionTable, name: string): string {
  const exact = table.long.get(name);
  if (exact !== undefined) return exact;
  if (table.abbreviate && name.length > 0) {
    let found: string | undefined;
    for (const [full, canonical] of table.long) {
      if (!full.startsWith(name)) continue;
      if (found !== undefined && found !== canonical) return `--${name}`;
      found = canonical;
    }
    if (found !== undefined) return found;
  }
  return `--${name}`;
}

function add(read: ReadOptions, name: string, word?: ShellWord): void {
  const values = read.options.get(name);
  if (values === undefined) read.options.set(name, word === undefined ? [] : [word.value]);
  else if (word !== undefined) values.push(word.value);
  if (word === undefined) return;
  const words = read.words.get(name);
  if (words === undefined) read.words.set(name, [word]);
  else words.push(word);
}

/**
 * Reads options and operands. Combined short flags (`-rf`), attached values (`-ofile`,
 * `--output=file`), separate values (`-o file`), `--` and unambiguous long prefixes follow getopt;
 * `-` alone is an operand.
 */
export function readOptions(words: readonly ShellWord[], table: OptionTable = NO_TABLE): ReadOptions {
  const read: ReadOptions = { options: new Map(), operands: [], words: new Map(), dynamic: false };
  const { operands } = read;
  let dynamic = false;
  let rest = words.length;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as ShellWord;
    const text = word.value;
    if (word.dynamic) dynamic = true;
    if (word.dynamic || text === '-' || !text.startsWith('-')) {
      operands.push(word);
      if (!table.stopAtOperand) continue;
      rest = i + 1;
      break;
    }
    if (text === '--') {
      rest = i + 1;
      break;
    }
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const name = longName(table, eq < 0 ? text.slice(2) : text.slice(2, eq));
      if (eq >= 0) add(read, name, { ...word, value: text.slice(eq + 1) });
      else if (table.valued.has(name) && i + 1 < words.length) add(read, name, words[++i]);
      else add(read, name);
      continue;
    }
    for (let k = 1; k < text.length; k++) {
      const letter = text[k] as string;
      const names = table.short.get(letter) ?? [`-${letter}`];
      const takes = names.some((n) => table.valued.has(n) || table.optional.has(n));
      if (!takes) {
        for (const name of names) add(read, name);
        continue;
      }
      const rest = text.slice(k + 1);
      const optionalOnly = names.every((n) => table.optional.has(n));
      const value = rest !== '' ? { ...word, value: rest } : optionalOnly ? undefined : words[++i];
      for (const name of names) add(read, name, value);
      break;
    }
  }
  for (const word of words.slice(rest)) {
    if (word.dynamic) dynamic = true;
    operands.push(word);
  }
  read.dynamic = dynamic;
  return read;
}

const GNU = { abbreviate: true };
const RM = optionTable(
  'f:force i I interactive=? one-file-system no-preserve-root preserve-root=? r,R:recursive d:dir v:verbose help version',
  GNU,
);
const CP_MV =
  'a:archive attributes-only b backup=? copy-contents d f:force i:interactive l:link L:dereference n:no-clobber P:no-dereference p preserve=? no-preserve= parents r,R:recursive reflink=? remove-destination sparse= strip-trailing-slashes s:symbolic-link S:suffix= t:target-directory= T:no-target-directory u:update=? v:verbose x:one-file-system Z context=? exchange no-copy';

/** Tools whose first operand names a subcommand, with the options they take before it. */
export const GLOBAL_OPTIONS: ReadonlyMap<string, OptionTable> = new Map([
  [
    'git',
    optionTable(
      'v:version h:help C= c= exec-path=? html-path man-path info-path p:paginate P:no-pager git-dir= work-tree= namespace= super-prefix= config-env= attr-source= list-cmds= bare no-replace-objects no-lazy-fetch no-optional-locks no-advice literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs',
      { abbreviate: false, stopAtOperand: true },
    ),
  ],
  [
    'docker',
    optionTable('config= c:context= D:debug H:host= l:log-level= tls tlscacert= tlscert= tlskey= tlsverify', {
      abbreviate: false,
      stopAtOperand: true,
    }),
  ],
  ['podman', optionTable('connection= c= url= root= runroot= log-level= remote r', { stopAtOperand: true })],
  [
    'kubectl',
    optionTable('n:namespace= context= cluster= user= kubeconfig= s:server= token= as= as-group=', {
      abbreviate: false,
      stopAtOperand: true,
    }),
  ],
  [
    'npm',
    optionTable('prefix= C= w:workspace= userconfig= registry= loglevel= g:global', { stopAtOperand: true }),
  ],
  [
    'cargo',
    optionTable('C= config= Z= color= v:verbose q:quiet locked offline frozen', { stopAtOperand: true }),
  ],
]);

/** Per-command tables; `git push` and the like are keyed `git push`. */
export const OPTION_TABLES: ReadonlyMap<string, OptionTable> = new Map([
  [
    'git worktree',
    optionTable(
      'b= B= f:force d:detach checkout no-checkout lock reason= q:quiet track no-track guess-remote orphan',
      GNU,
    ),
  ],
  ['rm', RM],
  [
    'split',
    optionTable(
      'a:suffix-length= additional-suffix= b:bytes= C:line-bytes= d numeric-suffixes=? x hex-suffixes=? e:elide-empty-files filter= l:lines= n:number= t:separator= u:unbuffered verbose',
      GNU,
    ),
  ],
  [
    'csplit',
    optionTable(
      'b:suffix-format= f:prefix= k:keep-files suppress-matched n:digits= s:quiet,silent z:elide-empty-files',
      GNU,
    ),
  ],
  ['mktemp', optionTable('d:directory u:dry-run q:quiet suffix= p= tmpdir=? t', GNU)],
  [
    'patch',
    optionTable(
      'p:strip= d:directory= i:input= o:output= r:reject-file= F:fuzz= z:suffix= B:prefix= Y:basename-prefix= D:ifdef= V:version-control= b:backup R:reverse N:forward f:force s:silent,quiet t:batch E:remove-empty-files l:ignore-whitespace u:unified c:context n:normal e:ed binary dry-run verbose merge=? posix',
      GNU,
    ),
  ],
  ['cp', optionTable(CP_MV, GNU)],
  ['mv', optionTable(CP_MV, GNU)],
  [
    'ln',
    optionTable(
      'b backup=? d,F:directory f:force i:interactive L:logical n:no-dereference P:physical r:relative s:symbolic S:suffix= t:target-directory= T:no-target-directory v:verbose',
      GNU,
    ),
  ],
  [
    'install',
    optionTable(
      'b backup=? c C:compare d:directory D g:group= m:mode= o:owner= p:preserve-timestamps s:strip strip-program= S:suffix= t:target-directory= T:no-target-directory v:verbose preserve-context Z context=?',
      GNU,
    ),
  ],
  ['tee', optionTable('a:append i:ignore-interrupts p output-error=?', GNU)],
  ['truncate', optionTable('c:no-create o:io-blocks r:reference= s:size=', GNU)],
  [
    'chmod',
    optionTable(
      'c:changes f:silent,quiet v:verbose no-preserve-root preserve-root reference= R:recursive',
      GNU,
    ),
  ],
  [
    'chown',
    optionTable(
      'c:changes f:silent,quiet v:verbose dereference h:no-dereference from= no-preserve-root preserve-root reference= R:recursive H L P',
      GNU,
    ),
  ],
  [
    'chgrp',
    optionTable(
      'c:changes f:silent,quiet v:verbose dereference h:no-dereference no-preserve-root preserve-root reference= R:recursive H L P',
      GNU,
    ),
  ],
  [
    'sed',
    optionTable(
      'n:quiet,silent debug e:expression= f:file= follow-symlinks i:in-place=? l:line-length= posix E,r:regexp-extended s:separate sandbox u:unbuffered z:null-data',
      GNU,
    ),
  ],
  [
    // gawk's options (mawk's `-W` among them), which end at the program text.
    'awk',
    optionTable(
      'f:file= F:field-separator= v:assign= b:characters-as-bytes c:traditional C:copyright d:dump-variables=? D:debug=? e:source= E:exec= g:gen-pot h:help i:include= I:trace k:csv l:load= L:lint=? M:bignum N:use-lc-numeric n:non-decimal-data o:pretty-print=? O:optimize p:profile=? P:posix r:re-interval s:no-optimize S:sandbox t:lint-old V:version W=',
      { abbreviate: true, stopAtOperand: true },
    ),
  ],
  [
    'grep',
    optionTable(
      'E:extended-regexp F:fixed-strings G:basic-regexp P:perl-regexp e:regexp= f:file= i:ignore-case no-ignore-case v:invert-match w:word-regexp x:line-regexp c:count color=? colour=? L:files-without-match l:files-with-matches m:max-count= o:only-matching q:quiet,silent s:no-messages b:byte-offset H:with-filename h:no-filename label= n:line-number T:initial-tab Z:null A:after-context= B:before-context= C:context= a:text binary-files= D:devices= d:directories= exclude= exclude-from= exclude-dir= include= r:recursive R:dereference-recursive line-buffered U:binary z:null-data',
      GNU,
    ),
  ],
  [
    'tar',
    optionTable(
      'A:catenate,concatenate c:create d:diff,compare delete r:append t:list u:update x:extract,get f:file= C:directory= T:files-from= X:exclude-from= exclude= z:gzip j:bzip2 J:xz v:verbose p:preserve-permissions k:keep-old-files O:to-stdout I:use-compress-program= to-command= checkpoint-action= F:info-script,new-volume-script= rsh-command= remove-files transform,xform= g:listed-incremental= index-file= volno-file= wildcards no-anchored anchored no-wildcards',
      GNU,
    ),
  ],
  [
    'curl',
    optionTable(
      'o:output= O:remote-name remote-name-all output-dir= D:dump-header= trace= trace-ascii= stderr= etag-save= libcurl= hsts= alt-svc= d:data= data-ascii= data-binary= data-raw= data-urlencode= F:form= form-string= json= H:header= X:request= u:user= A:user-agent= e:referer= T:upload-file= x:proxy= K:config= b:cookie= c:cookie-jar= w:write-out= url= k:insecure L:location s:silent S:show-error f:fail I:head v:verbose i:include m:max-time= connect-timeout= r:range= E:cert= key= cacert= C:continue-at= retry= G:get compressed',
      { abbreviate: false },
    ),
  ],
  [
    'wget',
    optionTable(
      'O:output-document= o:output-file= a:append-output= i:input-file= P:directory-prefix= post-file= post-data= body-file= body-data= method= header= U:user-agent= user= password= q:quiet c:continue r:recursive N:timestamping e:execute= save-cookies= load-cookies= warc-file=',
      GNU,
    ),
  ],
  ['head', optionTable('n:lines= c:bytes= q:quiet,silent v:verbose z:zero-terminated', GNU)],
  [
    'tail',
    optionTable(
      'n:lines= c:bytes= f:follow=? F pid= q:quiet,silent retry s:sleep-interval= v:verbose z:zero-terminated',
      GNU,
    ),
  ],
  [
    'cut',
    optionTable(
      'b:bytes= c:characters= d:delimiter= f:fields= complement s:only-delimited output-delimiter= z',
      GNU,
    ),
  ],
  [
    'rsync',
    optionTable(
      'a:archive r:recursive v:verbose q:quiet z:compress e:rsh= rsync-path= delete n:dry-run u:update l:links L:copy-links H:hard-links p:perms t:times g:group o:owner D P progress exclude= include= exclude-from= include-from= files-from= R:relative b:backup backup-dir= suffix= c:checksum h:human-readable i:itemize-changes T:temp-dir= partial-dir= log-file= link-dest= copy-dest= compare-dest= remove-source-files,remove-sent-files write-batch= only-write-batch=',
      GNU,
    ),
  ],
  [
    'zip',
    optionTable(
      'm:move r:recurse-paths R:recurse-patterns q:quiet v:verbose j:junk-paths u:update f:freshen d:delete T:test y:symlinks e:encrypt D:no-dir-entries b:temp-path= n:suffixes= t:from-date= unzip-command= o:latest-time g:grow X:no-extra O:out,output-file= @ P:password= Z:compression-method= s:split-size= logfile-path= 0 1 2 3 4 5 6 7 8 9',
      GNU,
    ),
  ],
  [
    'sort',
    optionTable(
      'b:ignore-leading-blanks d:dictionary-order f:ignore-case g:general-numeric-sort i:ignore-nonprinting M:month-sort h:human-numeric-sort n:numeric-sort R:random-sort random-source= r:reverse sort= V:version-sort batch-size= c:check=? C compress-program= debug files0-from= k:key= m:merge o:output= s:stable S:buffer-size= t:field-separator= T:temporary-directory= parallel= u:unique z:zero-terminated',
      GNU,
    ),
  ],
  ['wc', optionTable('c:bytes m:chars l:lines files0-from= L:max-line-length w:words total=', GNU)],
  [
    'od',
    optionTable(
      'A:address-radix= j:skip-bytes= N:read-bytes= S:strings=? t:format= v:output-duplicates w:width=? endian=',
      GNU,
    ),
  ],
  ['xxd', optionTable('a b C c= E e g= h i l= n= o= p postscript r d s= u', { abbreviate: false })],
  ['iconv', optionTable('f:from-code= t:to-code= c l:list o:output= s:silent verbose', GNU)],
  [
    'shuf',
    optionTable(
      'e:echo i:input-range= n:head-count= o:output= random-source= r:repeat z:zero-terminated',
      GNU,
    ),
  ],
  [
    'sdiff',
    optionTable(
      'o:output= i:ignore-case E:ignore-tab-expansion Z:ignore-trailing-space b:ignore-space-change W:ignore-all-space B:ignore-blank-lines I:ignore-matching-lines= strip-trailing-cr a:text w:width= l:left-column s:suppress-common-lines t:expand-tabs tabsize= d:minimal H:speed-large-files diff-program=',
      GNU,
    ),
  ],
  [
    'git push',
    optionTable(
      'all branches prune mirror n:dry-run porcelain d:delete tags follow-tags signed=? no-signed atomic no-atomic o:push-option= receive-pack= exec= force-with-lease=? no-force-with-lease f:force force-if-includes no-force-if-includes repo= u:set-upstream thin no-thin q:quiet v:verbose progress no-progress recurse-submodules= no-recurse-submodules verify no-verify 4:ipv4 6:ipv6',
    ),
  ],
  [
    'git reset',
    optionTable(
      'q:quiet no-quiet refresh no-refresh p:patch hard soft mixed merge keep recurse-submodules=? N:intent-to-add pathspec-from-file= pathspec-file-nul',
    ),
  ],
  ['git clean', optionTable('d f:force i:interactive n:dry-run q:quiet e:exclude= x X')],
  [
    'git branch',
    optionTable(
      'd:delete D>delete,force f:force m:move M>move,force c:copy C>copy,force l:list a:all r:remotes v:verbose q:quiet t:track=? no-track u:set-upstream-to= unset-upstream contains= merged= no-merged= sort= format= points-at= show-current',
    ),
  ],
  [
    'git checkout',
    optionTable(
      'q:quiet progress no-progress f:force ours theirs b= B= t:track=? no-track guess no-guess l detach orphan= ignore-skip-worktree-bits m:merge conflict= p:patch ignore-other-worktrees overwrite-ignore recurse-submodules=? pathspec-from-file=',
    ),
  ],
  [
    'git commit',
    optionTable(
      'a:all p:patch C:reuse-message= c:reedit-message= fixup= squash= reset-author short branch porcelain long z:null F:file= author= date= m:message= t:template= s:signoff no-signoff trailer= n:no-verify verify allow-empty allow-empty-message cleanup= e:edit no-edit amend no-post-rewrite i:include o:only pathspec-from-file= u:untracked-files=? v:verbose q:quiet dry-run status no-status S:gpg-sign=? no-gpg-sign',
    ),
  ],
]);

/** The table for a program (and, for tools with subcommands, its subcommand). */
export function optionTableFor(program: string, subcommand?: string): OptionTable | undefined {
  if (subcommand !== undefined) return OPTION_TABLES.get(`${program} ${subcommand}`);
  return OPTION_TABLES.get(program);
}

/**
 * Operands that carry an option by the manual's own rule. git-push(1): a refspec with a leading
 * `+` updates "even if it is not a fast-forward", which is what `--force` does.
 */
export function impliedOptions(program: string, subcommand: string | undefined, operand: string): string[] {
  if (program === 'git' && subcommand === 'push' && operand.startsWith('+') && operand.length > 1)
    return ['force'];
  return [];
}
