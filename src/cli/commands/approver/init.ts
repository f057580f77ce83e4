/**
 * `tally approver init`: your approver key, always encrypted, in `TALLY_HOME/keys/approver.key.json`,
 * its public key pinned in `TALLY_HOME/trust/approvers/`. The passphrase is typed at a terminal only:
 * the agent runs as the same user and could hand over anything else.
 */
import { join } from 'node:path';
import { tallyHome } from '../../../core/home.js';
import { createKey } from '../../../core/keystore.js';
import { APPROVER_KEY, pinApprover } from '../../../session/identity.js';
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';
import { askAtTerminal, atTerminal } from '../../session-context.js';

export const command: Command = {
  summary: 'create your approver key (encrypted; used only at a terminal)',
  usage: [
    'usage: tally approver init [--json]',
    '',
    'Creates an Ed25519 approver key protected by a passphrase typed twice at the terminal, in',
    '$TALLY_HOME/keys/approver.key.json, and pins its public key in $TALLY_HOME/trust/approvers/ so that',
    'tally verify counts the approvals it signs. Give approver.pub.json to whoever verifies your',
    'packages (tally approver add FILE on their side).',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (!atTerminal(ctx))
      throw new UsageError(
        'tally approver init needs a person at a terminal: the passphrase is typed there and nowhere else',
      );
    const home = tallyHome(ctx.env);
    const first = await askAtTerminal('new passphrase for the approver key: ', { echo: false });
    if (first.length === 0) throw new UsageError('an empty passphrase would not protect the approver key');
    const again = await askAtTerminal('the same passphrase again: ', { echo: false });
    if (again !== first) throw new UsageError('the two passphrases differ; nothing was created');
    const key = createKey(home, APPROVER_KEY, { passphrase: first });
    const pinned = pinApprover(home, key.publicKey);
    const out = {
      key_id: key.keyId,
      key: key.path,
      public: join(home, 'keys', `${APPROVER_KEY}.pub.json`),
      pinned,
    };
    if (values.json) printJson(ctx, out);
    else ctx.stderr(`created approver key ${out.key_id} (encrypted) in ${out.key}\npinned in ${pinned}\n`);
    return 0;
  },
};
