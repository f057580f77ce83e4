/** `tally ahp <subcommand>`: Agent Hooks Protocol tools. Each subcommand lives in ./ahp/. */
import { commandGroup } from '../group.js';

export const command = commandGroup('ahp', 'Agent Hooks Protocol: validate, dispatch, serve, capabilities', {
  validate: () => import('./ahp/validate.js'),
  dispatch: () => import('./ahp/dispatch.js'),
  serve: () => import('./ahp/serve.js'),
  capabilities: () => import('./ahp/capabilities.js'),
});
