/**
 * `tally ahp capabilities [--json]`: prints the capability manifest Tally advertises as an AHP
 * harness (the `hooks/capabilities` result). The manifest is checked by Tally's own message
 * validator before it is printed; a manifest that fails its own check exits 1.
 */

import { validateMessage } from '../../../ahp/messages/index.js';
import { capabilitiesResult } from '../../../ahp/protocol/capabilities.js';
import { type Command, FailureError, parseFlags, printJson, UsageError } from '../../command.js';

const USAGE = [
  'usage: tally ahp capabilities [--json]',
  '',
  'Prints the AHP capability manifest Tally advertises: the protocol version, every catalogue',
  'event with the modes Tally can deliver it in, and the effects it can enforce per event.',
  '',
  '  --json   print the hooks/capabilities result {protocolVersion, manifest} on stdout',
].join('\n');

export const command: Command = {
  summary: 'print the AHP capability manifest Tally advertises',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const result = capabilitiesResult();
    const issues = validateMessage({ jsonrpc: '2.0', id: 'capabilities', result }, 'capabilities-response');
    if (issues.length > 0) {
      const first = issues[0];
      throw new FailureError(
        `the advertised manifest fails validation at ${first?.pointer}: ${first?.message} [${first?.rule}]`,
      );
    }
    if (values.json === true) {
      printJson(ctx, result);
      return 0;
    }
    const { manifest } = result;
    const lines = [`AHP protocol version ${result.protocolVersion}`, ''];
    const width = Math.max(...manifest.events.map((e) => e.event.length));
    for (const entry of manifest.events) {
      const effects = entry.capabilities ? entry.capabilities.effects.join(', ') : '-';
      lines.push(`  ${entry.event.padEnd(width)}  ${entry.modes.join('+').padEnd(17)}  ${effects}`);
    }
    lines.push('');
    lines.push(
      `transports: ${manifest.transports.join(', ')}; authentication: ${manifest.authentication.join(', ')}`,
    );
    const limits = Object.entries(manifest.limits).map(([k, v]) => `${k}=${v}`);
    lines.push(`limits: ${limits.join(', ')}`);
    for (const gap of manifest.gaps) lines.push(`gap ${gap.path}: ${gap.reason}`);
    ctx.stdout(`${lines.join('\n')}\n`);
    return 0;
  },
};
