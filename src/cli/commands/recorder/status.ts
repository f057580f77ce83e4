/** `tally recorder status`: whether this user's recorder runs, its pid, port and sessions. */
import { tallyHome } from '../../../core/home.js';
import { RecorderClient } from '../../../recorder/client.js';
import { type Command, parseFlags, printJson } from '../../command.js';

export const command: Command = {
  summary: "the recorder's pid, port and the sessions it holds",
  usage: 'usage: tally recorder status [--json]\n\nExit 0 when it runs, 1 when it does not.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { json: { type: 'boolean' } });
    const client = await RecorderClient.of(tallyHome(ctx.env), ctx.env);
    const probe = await client.probe();
    const status = probe.state === 'up' ? probe.status : null;
    const silent = probe.state === 'silent';
    if (values.json)
      printJson(
        ctx,
        status ?? { pid: null, port: client.port, sessions: [], ...(silent ? { not_answering: true } : {}) },
      );
    else if (silent) ctx.stderr(`${client.silent().message}\n`);
    else if (!status) ctx.stderr(`no recorder is running (it would listen on 127.0.0.1:${client.port})\n`);
    else {
      ctx.stdout(`recorder ${status.pid} on 127.0.0.1:${status.port}, since ${status.started_at}\n`);
      for (const s of status.sessions)
        ctx.stdout(
          `  ${s.session}  ${s.records} records  ${s.agent ?? '(no agent)'}  ${s.root}${s.implicit ? '  (opened for a harness session)' : ''}\n`,
        );
    }
    return status ? 0 : 1;
  },
};
