/** `tally approver add FILE`: pin another person's approver public key. */
import { tallyHome } from '../../../core/home.js';
import { keyId } from '../../../core/keys.js';
import { pinApprover } from '../../../session/identity.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { publicKeyFromFile } from '../../key-arg.js';

export const command: Command = {
  summary: "pin an approver's public key: verify counts the approvals it signed",
  usage: [
    'usage: tally approver add FILE [--json]',
    '',
    'Pins the public key in FILE (a tally public key file) in $TALLY_HOME/trust/approvers/. Check its key',
    'id with its owner through another channel first.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    const publicKey = publicKeyFromFile(ctx, positionals);
    const path = pinApprover(tallyHome(ctx.env), publicKey);
    const out = { key_id: keyId(publicKey), pinned: path };
    if (values.json) printJson(ctx, out);
    else ctx.stderr(`pinned approver ${out.key_id} in ${path}\n`);
    return 0;
  },
};
