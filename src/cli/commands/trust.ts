/** `tally trust add|list|remove`: the ship keys `tally verify` trusts (TALLY_HOME/trust/). */
import { commandGroup } from '../group.js';

export const command = commandGroup('trust', 'pinned ship keys: add, list, remove', {
  add: () => import('./trust/add.js'),
  list: () => import('./trust/list.js'),
  remove: () => import('./trust/remove.js'),
});
