/** `tally receipt show|render`: receipts. */
import { commandGroup } from '../group.js';

export const command = commandGroup('receipt', 'receipts: show, render', {
  show: () => import('./receipt/show.js'),
  render: () => import('./receipt/render.js'),
});
