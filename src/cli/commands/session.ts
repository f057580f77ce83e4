/** `tally session start|event|status|close|repair`: the signed record of one agent session. */
import { commandGroup } from '../group.js';

export const command = commandGroup('session', 'sessions: start, event, status, close, repair', {
  start: () => import('./session/start.js'),
  event: () => import('./session/event.js'),
  status: () => import('./session/status.js'),
  close: () => import('./session/close.js'),
  repair: () => import('./session/repair.js'),
});
