/** Entry point of the `tally` command: routes the first word to a command module. */

import { TALLY_VERSION } from '../core/version.js';
import { type Command, type CommandContext, UsageError } from './command.js';
import { exitOf } from './exit-codes.js';

/** Every top-level command, loaded lazily so start-up stays fast. */
const COMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  init: () => import('./commands/init.js'),
  agent: () => import('./commands/agent.js'),
  session: () => import('./commands/session.js'),
  verify: () => import('./commands/verify.js'),
  trust: () => import('./commands/trust.js'),
  approver: () => import('./commands/approver.js'),
  approve: () => import('./commands/approve.js'),
  package: () => import('./commands/package.js'),
  receipt: () => import('./commands/receipt.js'),
  ahp: () => import('./commands/ahp.js'),
  recorder: () => import('./commands/recorder.js'),
  hook: () => import('./commands/hook.js'),
  mcp: () => import('./commands/mcp.js'),
  run: () => import('./commands/run.js'),
  wrap: () => import('./commands/wrap.js'),
  install: () => import('./commands/install.js'),
  uninstall: () => import('./commands/uninstall.js'),
  hub: () => import('./commands/hub.js'),
  push: () => import('./commands/push.js'),
  demo: () => import('./commands/demo.js'),
};

function defaultContext(): CommandContext {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stderr.isTTY),
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
  };
}

async function overview(): Promise<string> {
  const lines = ['usage: tally <command> [options]', '', 'commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const { command } = await load();
    lines.push(`  ${name.padEnd(10)} ${command.summary}`);
  }
  lines.push(
    '',
    'Run `tally <command> --help` for a command. Every command that reports a result takes --json',
    '(all but `tally mcp` and `tally recorder run`, whose standard output is a stream of their own).',
  );
  return `${lines.join('\n')}\n`;
}

export async function main(argv: string[], ctx: CommandContext = defaultContext()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? ctx.stderr : ctx.stdout)(await overview());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    ctx.stdout(`tally ${TALLY_VERSION}\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    ctx.stderr(`tally: unknown command '${name}'\n\n${await overview()}`);
    return 2;
  }
  const { command } = await load();
  // Flags after `--` belong to a command being run (tally run -- claude --help), not to tally.
  const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (own.includes('--help') || own.includes('-h')) {
    const usage = command.usageFor ? await command.usageFor(rest) : command.usage;
    ctx.stdout(usage.endsWith('\n') ? usage : `${usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, { ...ctx, invoke: (argv, at) => main(argv, at) });
  } catch (error) {
    const reported = exitOf(error);
    if (reported === undefined) throw error;
    const hint = error instanceof UsageError ? `\n(see 'tally ${name} --help')` : '';
    ctx.stderr(`tally ${name}: ${(error as Error).message}${hint}\n`);
    // With --json, a machine reading stdout always gets one JSON document, failures included.
    if (rest.includes('--json')) {
      ctx.stdout(
        `${JSON.stringify({ ok: false, error: { code: reported.code, message: (error as Error).message } }, null, 2)}\n`,
      );
    }
    return reported.exit;
  }
}
