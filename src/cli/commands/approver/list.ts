/** `tally approver list`: the pinned approver keys. */
import { tallyHome } from '../../../core/home.js';
import { pinnedApprovers } from '../../../session/identity.js';
import { type Command, parseFlags, printJson } from '../../command.js';

export const command: Command = {
  summary: 'the approver keys verify counts',
  usage: 'usage: tally approver list [--json]',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { json: { type: 'boolean' } });
    const keys = pinnedApprovers(tallyHome(ctx.env)).map((k) => ({ key_id: k.keyId, path: k.path }));
    if (values.json) printJson(ctx, { approvers: keys });
    else if (keys.length === 0)
      ctx.stderr(
        'no pinned approvers (tally approver init creates yours; tally approver add FILE pins another)\n',
      );
    else for (const k of keys) ctx.stdout(`${k.key_id}  ${k.path}\n`);
    return 0;
  },
};
