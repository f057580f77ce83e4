/**
 * `tally receipt render [PKG] -o FILE`: the receipt page as one self-contained offline HTML file
 * (page, verifier script and package together) that verifies the package when opened. It says
 * "self-consistent" until the viewer pins the signer's key, then "verified".
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderOfflineReceipt, viewPackage } from '../../../hub/pages/index.js';
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';
import { packageArgument } from '../../package-view.js';

export const command: Command = {
  summary: 'the receipt page as one offline HTML file that verifies itself when opened',
  usage:
    'usage: tally receipt render [PKG] -o FILE [--json]   (default: the newest package of this project)\n' +
    '  The file opens with no network request; it says "self-consistent" until the viewer pins\n' +
    '  the signer\'s key (a public key file, or its key id), and only then "verified".',
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      output: { type: 'string', short: 'o' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 1) throw new UsageError('give at most one package file');
    if (values.output === undefined) throw new UsageError('say where to write the page: -o FILE');
    const path = packageArgument(ctx, positionals[0]);
    const bytes = readFileSync(path);
    const view = viewPackage(bytes);
    const out = resolve(ctx.cwd, values.output);
    const page = renderOfflineReceipt(bytes);
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, page);
    renameSync(tmp, out);
    const signers = view.keys.map((k) => k.id);
    if (values.json)
      printJson(ctx, {
        path: out,
        bytes: Buffer.byteLength(page),
        session: view.session,
        signer_keys: signers,
      });
    else {
      ctx.stderr(
        `wrote ${out} (${Buffer.byteLength(page)} bytes), receipt of ${view.session ?? 'an unreadable package'}\n`,
      );
      ctx.stderr(
        `signed by ${signers.join(', ') || 'no readable key'}: the page says "self-consistent" until the viewer pins that key\n`,
      );
      if (view.problem !== null) ctx.stderr(`warning: ${view.problem}\n`);
    }
    return 0;
  },
};
