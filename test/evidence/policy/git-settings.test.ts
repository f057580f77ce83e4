/**
 * git settings on the line that run a program the line does not show (`-c core.fsmonitor=…`,
 * `-c alias.x='!…'`, `GIT_EXTERNAL_DIFF=…`). Oracle: the real git, run by bash in a repository
 * holding `protected/` and a changed file: each such line changes `protected/`, so the judge must not
 * allow it; settings that are data (`user.name`, `core.pager=cat`, `color.ui`) change nothing and stay
 * allowed.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { have, gitLine as run, verdictOf, verdictTable } from './protected.js';

describe('git settings that run programs', {
  skip: !['bash', 'git'].every(have) && 'bash or git missing',
}, () => {
  verdictTable(run, {
    verdict: 'escalate',
    changes: [
      "git -c core.fsmonitor='touch protected/y' status",
      "git -c alias.x='!touch protected/y' x",
      "git -c Alias.x='!touch protected/y' x",
      "git -c diff.external='touch protected/y' diff",
      "GIT_EXTERNAL_DIFF='touch protected/y' git diff",
      "env GIT_EXTERNAL_DIFF='touch protected/y' git diff",
      "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.z GIT_CONFIG_VALUE_0='!touch protected/y' git z",
      "W='!touch protected/y' git --config-env=alias.w=W w",
      "export GIT_EXTERNAL_DIFF='touch protected/y'; git diff",
      "git config core.fsmonitor 'touch protected/y; false'; git status",
      "git config alias.zz '!touch protected/y'; git zz",
      "git ls-remote --upload-pack='touch protected/y; false' .",
      "git grep -O'touch protected/y' two",
      "git difftool -y -x 'touch protected/y'",
      'git commit -qam two && git bisect start HEAD HEAD~1 && git bisect run touch protected/y',
      "GIT_ALLOW_PROTOCOL=ext git clone -q 'ext::sh -c touch% protected/y' cl",
    ],
    harmless: [
      'GIT_TRACE=1 git status',
      'git -c core.longpaths=true status',
      "git -c http.extraheader='X-A: b' status",
      'git config user.name someone',
      'git -c user.name=a -c user.email=a@example.com commit -qam two',
      'git -c core.pager=cat log',
      'GIT_PAGER=cat git log --oneline',
      'git -c color.ui=never status',
      'git --no-pager diff',
    ],
  });
  verdictTable(run, {
    changes: [
      'git archive -o protected/y HEAD',
      'git diff --output=protected/y HEAD',
      'git init -q protected/sub',
      'git worktree add -q protected/wt',
      'git bundle create protected/b HEAD',
      'git format-patch -q --root -o protected',
      'git format-patch -q -1 -oprotected',
      'git -C protected archive -o y HEAD',
      'git -C protected format-patch -q -1',
      'git init -q --separate-git-dir=protected/g n',
      'git worktree add -q -b nb protected/wt',
      'git config --file protected/y user.name z',
      'git merge-file protected/keep protected/keep f',
    ],
    harmless: ['git init -q', 'git stash list', 'git clean -n'],
  });
  test('spellings git accepts for the tree writers are tree writers', () => {
    for (const line of [
      'git stash -m list',
      'git reset --har',
      'git apply --check --apply p.diff',
      'git clean -n --no-dry-run -f',
      'git restore --staged --work protected/x',
      'git checkout -f -b nb',
      'git sparse-checkout init --cone',
      'git clone . n -c core.hooksPath=../h',
      'git --git-dir=protected/g init',
    ])
      assert.notEqual(verdictOf(line), 'allowed', line);
  });
});
