/**
 * `tally recorder run`: the recorder itself, in the foreground (the CLI starts it detached on
 * demand). A passphrase for an encrypted ship key is read from stdin when stdin is a pipe.
 */
import { tallyHome } from '../../../core/home.js';
import { runRecorder } from '../../../recorder/daemon.js';
import { type Command, parseFlags } from '../../command.js';
import { tuneForLongRunning } from '../../long-running.js';

export const command: Command = {
  summary: 'run the recorder in the foreground (started on demand otherwise)',
  usage: [
    'usage: tally recorder run [--ready]',
    '',
    'Runs this user’s session recorder on 127.0.0.1 (the port in TALLY_HOME/recorder.json) until it',
    'is idle (TALLY_RECORDER_IDLE_MS, default one hour), stopped, or signalled. The passphrase of an',
    'encrypted ship key is read from stdin when stdin is a pipe, never from the environment.',
    'With --ready it prints `ready` on stdout once it listens, then closes stdout (how the CLI that',
    'starts it knows, without polling).',
  ].join('\n'),
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { ready: { type: 'boolean' } });
    tuneForLongRunning();
    let passphrase: string | undefined;
    if (!process.stdin.isTTY) {
      const text = (await ctx.stdin()).toString('utf8');
      const line = text.split('\n')[0];
      if (line) passphrase = line;
    }
    return runRecorder({
      home: tallyHome(ctx.env),
      env: ctx.env,
      ...(passphrase ? { passphrase } : {}),
      ...(values.ready
        ? {
            onListening: () => {
              // Nothing else is ever written to stdout: a starter that has read the line may go.
              process.stdout.on('error', () => undefined);
              process.stdout.end('ready\n');
            },
          }
        : {}),
    });
  },
};
