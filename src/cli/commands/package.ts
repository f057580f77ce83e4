/** `tally package inspect`: reading session packages. */
import { commandGroup } from '../group.js';

export const command = commandGroup('package', 'session packages: inspect', {
  inspect: () => import('./package/inspect.js'),
});
