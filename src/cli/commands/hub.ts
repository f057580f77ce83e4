/** `tally hub <subcommand>`: run a hub, list what one holds, audit its log. Each lives in ./hub/. */
import { commandGroup } from '../group.js';

export const command = commandGroup('hub', 'the hub: serve, ls, audit', {
  serve: () => import('./hub/serve.js'),
  ls: () => import('./hub/ls.js'),
  audit: () => import('./hub/audit.js'),
});
