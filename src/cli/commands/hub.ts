/** `tally hub <subcommand>`: run a hub, list what one holds, audit its log. Each lives in ./hub/. */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';

const SUBCOMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  serve: () => import('./hub/serve.js'),
  ls: () => import('./hub/ls.js'),
  audit: () => import('./hub/audit.js'),
};

export const command: Command = {
  summary: 'the hub: serve, ls, audit',
  usage: [
    'usage: tally hub <serve|ls|audit> [options]',
    '',
    '  serve [--db FILE|postgres://…] [--key FILE] [--host H] [--port N] [--json]',
    '                                 run a hub (SQLite under $TALLY_HOME/hub/ by default)',
    '  ls --hub URL [packages|certificates|agents|ships] [--agent A] [--ship S] [--since T] [--until T] [--limit N] [--json]',
    '                                 list what a hub holds',
    '  audit URL [--hub-key KEY] [--json]',
    '                                 check the hub log is consistent with every checkpoint seen before',
  ].join('\n'),
  async usageFor(argv) {
    const load = argv[0] === undefined ? undefined : SUBCOMMANDS[argv[0]];
    return load ? (await load()).command.usage : this.usage;
  },
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    const load = sub === undefined ? undefined : SUBCOMMANDS[sub];
    if (!load)
      throw new UsageError(
        sub === undefined
          ? 'missing subcommand'
          : `unknown subcommand '${sub}' (expected one of: ${Object.keys(SUBCOMMANDS).join(', ')})`,
      );
    return (await load()).command.run(rest, ctx);
  },
};
