/** `tally recorder stop`: the recorder lets its sessions go (each stays open on disk) and exits. */
import { tallyHome } from '../../../core/home.js';
import { RecorderClient } from '../../../recorder/client.js';
import { type Command, parseFlags, printJson } from '../../command.js';

export const command: Command = {
  summary: 'stop the recorder (its sessions stay open and resume with the next one)',
  usage: 'usage: tally recorder stop [--json]',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { json: { type: 'boolean' } });
    const client = await RecorderClient.of(tallyHome(ctx.env), ctx.env);
    const before = await client.status();
    const stopped = before ? await client.stop() : false;
    if (stopped) {
      // Wait until it is gone, so a caller can start another at once.
      for (let i = 0; i < 100 && (await client.status()); i++) await new Promise((r) => setTimeout(r, 50));
    }
    if (values.json) printJson(ctx, { stopped, pid: before?.pid ?? null });
    else ctx.stderr(stopped ? `stopped recorder ${before!.pid}\n` : 'no recorder was running\n');
    return 0;
  },
};
