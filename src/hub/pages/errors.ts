/** The pages' one error class. */
import { TallyError } from '../../core/errors.js';

/** `no-verifier`: the browser verifier was not built (`npm run build`). */
export class PagesError extends TallyError<'no-verifier'> {}
