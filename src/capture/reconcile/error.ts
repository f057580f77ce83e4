/** The one error class of reconciliation: the working tree could not be compared as the baseline says. */
import { TallyError } from '../../core/errors.js';

/**
 * `git`: a git command failed; `timeout`: one ran past the pass's deadline (killed); `git-state`:
 * an entry of the repository's git directory git would read is not a regular file (a FIFO or a
 * device would keep git, or Tally, waiting); `baseline`: the start's baseline is missing or holds
 * an error; `bad-option`: a caller's option is out of range.
 */
export type ReconcileErrorCode = 'git' | 'timeout' | 'git-state' | 'baseline' | 'bad-option';

/** The working tree could not be read as the baseline says it was; `detail` names what. */
export class ReconcileError extends TallyError<ReconcileErrorCode> {}
