/** `tally hub audit URL`: consistency of the hub log with every checkpoint kept before. */

import { tallyHome } from '../../../core/home.js';
import { auditHub } from '../../../hub-client/audit.js';
import { type Command, FailureError, parseFlags, printJson, UsageError } from '../../command.js';

export const command: Command = {
  summary: "audit a hub's transparency log",
  usage: [
    'usage: tally hub audit URL [--hub-key NAME+ID+KEY] [--json]',
    '',
    'Fetches the signed checkpoint, verifies it with the pinned hub key (--hub-key, else the key',
    'recorded on first use under $TALLY_HOME/hub-audit/), and proves it consistent with the newest',
    'checkpoint kept from earlier audits. Exit 0 consistent, 1 not (kept aside, never replacing the',
    'last good one), 2 usage or unreachable hub.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      'hub-key': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new UsageError('give the hub URL');
    const result = await auditHub(positionals[0]!, {
      home: tallyHome(ctx.env),
      ...(values['hub-key'] !== undefined ? { hubKey: values['hub-key'] } : {}),
    });
    if (values.json) printJson(ctx, result);
    else {
      ctx.stdout(
        `${result.origin}: size ${result.size}, root ${result.root}\n` +
          `  key ${result.trust === 'first-use' ? 'trusted on first use and recorded' : result.trust}: ${result.verifier_key}\n` +
          (result.previous
            ? `  ${result.consistent ? 'consistent with' : 'NOT CONSISTENT with'} the checkpoint of size ${result.previous.size}\n`
            : '  first checkpoint kept\n'),
      );
    }
    if (!result.consistent) {
      if (values.json) return 1;
      throw new FailureError(
        `the hub's log is not consistent with the checkpoint of size ${result.previous?.size} seen before`,
      );
    }
    return 0;
  },
};
