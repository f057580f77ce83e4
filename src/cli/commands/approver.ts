/** `tally approver init|add|list`: the keys of the people whose signed approvals count. */
import { commandGroup } from '../group.js';

export const command = commandGroup('approver', 'approver keys: init, add, list', {
  init: () => import('./approver/init.js'),
  add: () => import('./approver/add.js'),
  list: () => import('./approver/list.js'),
});
