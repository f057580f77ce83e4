/** `tally receipt show [PKG]`: the receipt of a package as a readable summary (read, not verified). */
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';
import { inspectPackage, packageArgument, summary } from '../../package-view.js';

export const command: Command = {
  summary: 'the receipt of a package as a readable summary (read, not verified)',
  usage: 'usage: tally receipt show [PKG] [--json]   (default: the newest package of this project)',
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    if (positionals.length > 1) throw new UsageError('give at most one package file');
    const p = await inspectPackage(packageArgument(ctx, positionals[0]));
    if (values.json) printJson(ctx, p.receipt);
    else ctx.stdout(summary(p));
    return 0;
  },
};
