/**
 * `tally recorder env`: the shell line that gives an agent the recorder's secret, for agents that
 * send it from their environment (Claude Code http hooks). `eval "$(tally recorder env)"`.
 */
import { tallyHome } from '../../../core/home.js';
import { recorderPaths, recorderSecret, SECRET_ENV } from '../../../recorder/config.js';
import { type Command, parseFlags, printJson } from '../../command.js';

export const command: Command = {
  summary: "the shell line that puts the recorder's secret in an agent's environment",
  usage: 'usage: tally recorder env [--json]   (eval "$(tally recorder env)")',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { json: { type: 'boolean' } });
    const secret = recorderSecret(recorderPaths(tallyHome(ctx.env)), true);
    if (values.json) printJson(ctx, { [SECRET_ENV]: secret });
    else ctx.stdout(`export ${SECRET_ENV}=${secret}\n`);
    return 0;
  },
};
