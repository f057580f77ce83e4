/** `tally session status`: the open (or named) session, its records so far. */
import { sessionStatus } from '../../../session/status.js';
import { currentSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { placesOf } from '../../session-context.js';

export const command: Command = {
  summary: 'the open session: records so far, log, agent',
  usage: 'usage: tally session status [--session ID] [--json]',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
    const where = placesOf(ctx);
    const id = values.session ?? currentSession(where.state);
    if (!id) {
      if (values.json) printJson(ctx, { session: null, state: where.state });
      else ctx.stderr(`no open session (state in ${where.state})\n`);
      return 0;
    }
    const out = await sessionStatus(where.state, id);
    if (values.json) printJson(ctx, out);
    else {
      ctx.stdout(
        `session ${out.session} (${out.state})\n  started  ${out.started_at}\n  records  ${out.records}${out.torn_tail ? ' (+ a torn last line, recovered at close)' : ''}\n`,
      );
      if (out.agent) ctx.stdout(`  agent    ${out.agent.name}\n`);
      if (out.package) ctx.stdout(`  package  ${out.package}\n`);
    }
    return 0;
  },
};
