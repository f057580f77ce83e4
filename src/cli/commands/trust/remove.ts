/** `tally trust remove KEY_ID`: unpin a key. */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tallyHome } from '../../../core/home.js';
import { trustDir } from '../../../session/identity.js';
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';

export const command: Command = {
  summary: 'unpin a key: verify no longer trusts it',
  usage: 'usage: tally trust remove KEY_ID [--json]',
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    const id = positionals[0];
    if (positionals.length !== 1 || id === undefined || !/^key_[0-9a-f]{32}$/.test(id))
      throw new UsageError('give exactly one key id (key_ and 32 hex digits, as tally trust list prints)');
    const path = join(trustDir(tallyHome(ctx.env)), `${id}.pub.json`);
    const removed = existsSync(path);
    rmSync(path, { force: true });
    if (values.json) printJson(ctx, { key_id: id, removed });
    else ctx.stderr(removed ? `unpinned ${id}\n` : `${id} was not pinned\n`);
    return removed ? 0 : 1;
  },
};
