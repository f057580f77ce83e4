/** `tally trust list`: the pinned ship keys. */
import { tallyHome } from '../../../core/home.js';
import { pinnedKeys } from '../../../session/identity.js';
import { type Command, parseFlags, printJson } from '../../command.js';

export const command: Command = {
  summary: 'the ship keys verify trusts',
  usage: 'usage: tally trust list [--json]',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { json: { type: 'boolean' } });
    const keys = pinnedKeys(tallyHome(ctx.env)).map((k) => ({
      key_id: k.keyId,
      ship_id: k.shipId,
      path: k.path,
    }));
    if (values.json) printJson(ctx, { keys });
    else if (keys.length === 0)
      ctx.stderr('no pinned keys (tally init pins yours; tally trust add FILE pins another ship’s)\n');
    else for (const k of keys) ctx.stdout(`${k.key_id}  ${k.ship_id}  ${k.path}\n`);
    return 0;
  },
};
