/** `tally recorder status|stop|run`: the session recorder of this user (this TALLY_HOME). */
import { commandGroup } from '../group.js';

export const command = commandGroup('recorder', 'the session recorder: status, stop, env, run', {
  status: () => import('./recorder/status.js'),
  stop: () => import('./recorder/stop.js'),
  env: () => import('./recorder/env.js'),
  run: () => import('./recorder/run.js'),
});
