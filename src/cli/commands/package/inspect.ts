/** `tally package inspect [PKG]`: the header, seal and receipt of a package, read without verifying. */
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';
import { inspectPackage, packageArgument, summary } from '../../package-view.js';

export const command: Command = {
  summary: 'the header, seal and receipt of a package (read, not verified)',
  usage: 'usage: tally package inspect [PKG] [--json]   (default: the newest package of this project)',
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    if (positionals.length > 1) throw new UsageError('give at most one package file');
    const p = await inspectPackage(packageArgument(ctx, positionals[0]));
    if (values.json)
      printJson(ctx, {
        path: p.path,
        header: p.header,
        merkle: p.seal.merkle,
        receipt: p.receipt,
        verified: false,
      });
    else ctx.stdout(`${p.path}\n${summary(p)}`);
    return 0;
  },
};
