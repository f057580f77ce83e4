/** The pages' error class, apart so the package root can export it without loading the pages. */
import { TallyError } from '../../core/errors.js';

export class PagesError extends TallyError<'no-verifier'> {}
