/**
 * `tally recorder env`: the shell line that gives an agent the token its installed http hooks send
 * from its environment (Claude Code's, Qwen Code's): not the secret, but one the recorder takes for
 * the native hook endpoints only (`hooksToken`). `eval "$(tally recorder env)"`.
 */
import { tallyHome } from '../../../core/home.js';
import { hooksToken, recorderPaths, recorderSecret, SECRET_ENV } from '../../../recorder/config.js';
import { type Command, parseFlags, printJson } from '../../command.js';

export const command: Command = {
  summary: "the shell line that puts the hooks' token (not the secret) in an agent's environment",
  usage: 'usage: tally recorder env [--json]   (eval "$(tally recorder env)")',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { json: { type: 'boolean' } });
    const token = hooksToken(recorderSecret(recorderPaths(tallyHome(ctx.env)), true));
    if (values.json) printJson(ctx, { [SECRET_ENV]: token });
    else ctx.stdout(`export ${SECRET_ENV}=${token}\n`);
    return 0;
  },
};
