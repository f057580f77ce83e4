/**
 * The folder git runs a repository's hooks from, asked of git at each pass. `core.hooksPath` moves
 * it anywhere: outside the tree, into `.git/` beside the folders Tally watches, or into a folder of
 * the tree that a `.gitignore` hides (husky's `.husky/_`). It can be set in the repository's
 * config, in a file that config includes, in the user's or the system's: a hook planted where it
 * points runs at the next commit. So where it is not the common directory's `hooks`, that folder
 * is watched too, as `<marker>/hooks-path`, at the start and at the close alike (moved during the
 * session: the close compares the hooks git runs then with those it ran at the start, by name).
 * The common directory's `hooks` stays watched: git runs it again once the setting goes, so a hook
 * planted there while the setting pointed elsewhere is a row all the same.
 */
import { isAbsolute } from 'node:path';
import type { ConfigPlaces } from '../../core/git.js';
import type { Unreadable } from './content.js';
import type { Deadline } from './deadline.js';
import { gitEnv, placeNow } from './git.js';
import { askEach, type GitRepository, HOOKS_PATH } from './git-state.js';
import { rawOfText, rawPath } from './paths.js';

/**
 * Sets each repository's `hooks` to the folder git names (`git rev-parse --git-path hooks` in its
 * work tree, with the user's config as git reads it on any command, where `places` say) when it is
 * not the common directory's `hooks`. A repository git will not run in (its `.git` names no repository, its config
 * does not parse) runs no hook either. A pass past its deadline stops here, as at any git command.
 * Returns the hooks folders that could not be told (a name with a line end in it, which git prints
 * as it is): unreadable, so the pass that compares them fails rather than watch the wrong place.
 */
export async function locateHooks(
  root: string,
  repositories: readonly GitRepository[],
  deadline: Deadline,
  places: ConfigPlaces,
): Promise<Unreadable[]> {
  const untold: Unreadable[] = [];
  const asked = ['rev-parse', '--git-common-dir', '--git-path', 'hooks'];
  await askEach(root, repositories, asked, deadline, gitEnv(places), (repository, out, worktree) => {
    // Two lines, each from where git ran, the work tree's top (where it runs hooks from too): the
    // common directory git uses now, and the hooks folder. Compared with each other, not with the
    // places the start recorded: a `.git` file pointed elsewhere is a row of its own.
    const lines = rawPath(out).replace(/\n$/, '').split('\n');
    if (lines.length !== 2) {
      untold.push({ raw: `${repository.marker}/${HOOKS_PATH}`, code: 'hooks-path-unread', folder: true });
      return;
    }
    const [common, hooks] = lines.map((named) =>
      isAbsolute(named) ? named : `${rawOfText(worktree)}/${named}`,
    );
    if (placeNow(hooks!, deadline) !== placeNow(`${common}/hooks`, deadline)) repository.hooks = hooks;
  });
  return untold;
}
