/** `tally receipt show`: receipts. */
import { commandGroup } from '../group.js';

export const command = commandGroup('receipt', 'receipts: show', {
  show: () => import('./receipt/show.js'),
});
