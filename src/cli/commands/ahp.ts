/** `tally ahp <subcommand>`: Agent Hooks Protocol tools. Each subcommand lives in ./ahp/. */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';

const SUBCOMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  validate: () => import('./ahp/validate.js'),
  dispatch: () => import('./ahp/dispatch.js'),
  serve: () => import('./ahp/serve.js'),
  capabilities: () => import('./ahp/capabilities.js'),
};

export const command: Command = {
  summary: 'Agent Hooks Protocol: validate, dispatch, serve, capabilities',
  usage: [
    'usage: tally ahp <validate|dispatch|serve|capabilities> [options]',
    '',
    '  validate FILE [--admit] [--json]  check a portable registration document',
    '  dispatch --registration FILE --event FILE [--capabilities FILE] [--state FILE]',
    '           [--attachment PART_ID=FILE ...] [--oauth-clients FILE] [--json]',
    '                                    run one event through every matching backend',
    '  serve (--stdio | --port N [--host H] [--json]) --rules FILE',
    '                                    run a rule-file policy backend',
    '  capabilities [--json]             print the capability manifest Tally advertises',
  ].join('\n'),
  async usageFor(argv) {
    const load = argv[0] === undefined ? undefined : SUBCOMMANDS[argv[0]];
    return load ? (await load()).command.usage : this.usage;
  },
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    const load = sub === undefined ? undefined : SUBCOMMANDS[sub];
    if (!load) {
      throw new UsageError(
        sub === undefined
          ? 'missing subcommand'
          : `unknown subcommand '${sub}' (expected one of: ${Object.keys(SUBCOMMANDS).join(', ')})`,
      );
    }
    const { command: subcommand } = await load();
    return subcommand.run(rest, ctx);
  },
};
