/** `tally receipt show`: see ./package.ts, which reads packages for both commands. */
export { receiptCommand as command } from './package.js';
