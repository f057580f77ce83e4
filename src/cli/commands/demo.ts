/**
 * `tally demo`: the README's main job. In a fresh temporary git repository and Tally home it runs
 * the real CLI end to end — init, register an agent, start a session, record the agent's events
 * (one of them forbidden, one carrying a secret), close, verify with and without the certificate,
 * then tamper with a copy and show verification naming the broken check.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, type CommandContext, FailureError, parseFlags, printJson } from '../command.js';

interface Step {
  title: string;
  argv: string[];
  stdin?: unknown;
  expectExit?: number;
}

function agentEvents(
  root: string,
): { title: string; event: Record<string, unknown>; before?: () => void; expectExit?: number }[] {
  const call = (id: string, name: string, kind: string, input: unknown) => ({
    type: 'tool.before',
    call: { id },
    path: 'native',
    tool: { origin: 'native', name, kind, input },
  });
  const after = (id: string, name: string, kind: string, input: unknown, exitCode?: number) => ({
    type: 'tool.after',
    call: { id },
    path: 'native',
    tool: { origin: 'native', name, kind, input },
    outcome: 'ok',
    execution: { status: 'executed' },
    items: [],
    durationMs: 12,
    ...(exitCode === undefined ? {} : { extensions: { 'dev.tally.process': { exitCode, durationMs: 12 } } }),
  });
  const readInput = { file_path: join(root, 'README.md') };
  const editInput = { file_path: join(root, 'src/app.js'), old_string: 'v1', new_string: 'v2' };
  const gitInput = { command: 'git status --short' };
  const rmInput = { command: 'rm -rf /tmp/important' };
  const secretInput = {
    command:
      'curl -H "Authorization: Bearer sk-demo-0123456789abcdef0123456789" https://api.example.com/health',
  };
  return [
    { title: 'agent reads README.md', event: call('c1', 'Read', 'read', readInput) },
    { title: 'read completes', event: after('c1', 'Read', 'read', readInput) },
    {
      title: 'agent edits src/app.js (the file really changes)',
      event: call('c2', 'Edit', 'edit', editInput),
      before: () => writeFileSync(join(root, 'src/app.js'), 'export const version = "v2";\n'),
    },
    { title: 'edit completes', event: after('c2', 'Edit', 'edit', editInput) },
    { title: 'agent runs git status', event: call('c3', 'Bash', 'shell', gitInput) },
    { title: 'git status exits 0', event: after('c3', 'Bash', 'shell', gitInput, 0) },
    {
      title: 'agent tries rm -rf (forbidden by the certificate: recorded, denied, exit 1)',
      event: call('c4', 'Bash', 'shell', rmInput),
      expectExit: 1,
    },
    {
      title: 'agent runs curl with a bearer token (redacted before recording)',
      event: call('c5', 'Bash', 'shell', secretInput),
    },
  ];
}

async function runStep(
  step: Step,
  base: CommandContext,
  log: (s: string) => void,
  quiet: boolean,
): Promise<string> {
  if (!base.invoke) throw new Error('the demo runs inside the tally command (no invoke in context)');
  let out = '';
  let err = '';
  const ctx: CommandContext = {
    ...base,
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    isTTY: false,
    stdin: async () => Buffer.from(step.stdin === undefined ? '' : JSON.stringify(step.stdin)),
  };
  const code = await base.invoke(step.argv, ctx);
  const expected = step.expectExit ?? 0;
  log(
    `\n$ tally ${step.argv.map((a) => (/[\s*()]/.test(a) ? `'${a}'` : a)).join(' ')}${step.stdin ? '   <<< event JSON' : ''}\n`,
  );
  if (!quiet) log(`${err}${out}`.replace(/^/gm, '  ').trimEnd() + '\n');
  if (code !== expected)
    throw new FailureError(`demo step '${step.title}' exited ${code}, expected ${expected}:\n${err}${out}`);
  return out;
}

export const command: Command = {
  summary: 'run the end-to-end demo: a recorded, sealed and verified agent session',
  usage:
    'usage: tally demo [--keep] [--json]\n\nRuns in a temporary git repository with its own TALLY_HOME; --keep leaves it for inspection.',
  async run(argv, ctx) {
    const { values } = parseFlags(argv, { keep: { type: 'boolean' }, json: { type: 'boolean' } });
    const dir = mkdtempSync(join(tmpdir(), 'tally-demo-'));
    const root = join(dir, 'repo');
    mkdirSync(join(root, 'src'), { recursive: true });
    writeFileSync(join(root, 'README.md'), '# demo\n');
    writeFileSync(join(root, 'src/app.js'), 'export const version = "v1";\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.name=Demo', '-c', 'user.email=demo@example.invalid', 'add', '.');
    git('-c', 'user.name=Demo', '-c', 'user.email=demo@example.invalid', 'commit', '-qm', 'start');
    writeFileSync(join(root, 'notes.txt'), 'dirty before the session: not the agent’s doing\n');
    const env = { ...ctx.env, TALLY_HOME: join(dir, 'home'), TALLY_PASSPHRASE: undefined };
    const base: CommandContext = { ...ctx, cwd: root, env };
    const say = (s: string) => (values.json ? undefined : ctx.stderr(s));
    const step = (title: string, argv: string[], stdin?: unknown, expectExit?: number) =>
      runStep(
        { title, argv, ...(stdin ? { stdin } : {}), ...(expectExit !== undefined ? { expectExit } : {}) },
        base,
        say,
        false,
      );
    try {
      say(`Tally demo in ${root}\n`);
      await step('init', ['init']);
      await step('register', [
        'agent',
        'register',
        '--name',
        'coder',
        '--model',
        'demo-model',
        '--provider',
        'demo-provider',
        '--allow',
        'Read',
        '--allow',
        'Edit(src/**)',
        '--allow',
        'Bash(git status*)',
        '--allow',
        'Bash(curl *)',
        '--forbid',
        'Bash(rm -rf *)',
        '--escalate',
        'Bash(git push*)',
        '--valid-days',
        '7',
      ]);
      await step('start', ['session', 'start', '--agent', 'coder']);
      for (const e of agentEvents(root)) {
        e.before?.();
        await step(e.title, ['session', 'event', '--source', 'hook'], e.event, e.expectExit);
      }
      const pkg = (await step('close', ['session', 'close'])).trim();
      await step('receipt', ['receipt', 'show', pkg]);
      await step('verify', ['verify', pkg]);
      const crossOut = await runStep(
        {
          title: 'verify with certificate',
          argv: ['verify', pkg, '--certificate', 'coder', '--json'],
          expectExit: 0,
        },
        base,
        say,
        true,
      );
      const cross = JSON.parse(crossOut) as { checks: { check: string; ok: boolean; code: string }[] };
      say(
        cross.checks.map((c) => `  ${c.ok ? '✓' : '✗'} ${c.check} ${c.code}`).join('\n') +
          '\n  (the forbidden rm -rf was recorded and denied by policy — `session event` exited 1, the answer a\n   hook gives the agent to stop the call — so it is reported as blocked, not as unauthorized work)\n',
      );
      const tampered = join(dir, 'tampered.tally');
      copyFileSync(pkg, tampered);
      const bytes = readFileSync(tampered);
      // Flip one character in the middle of the sixth record's signed payload.
      let lineStart = 0;
      for (let i = 0; i < 6; i++) lineStart = bytes.indexOf(0x0a, lineStart) + 1;
      const at = bytes.indexOf('"payload":"', lineStart) + 40;
      bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
      writeFileSync(tampered, bytes);
      const tamperOut = await runStep(
        { title: 'verify tampered copy', argv: ['verify', tampered, '--json'], expectExit: 1 },
        base,
        say,
        true,
      );
      const broken = (
        JSON.parse(tamperOut) as { checks: { check: string; ok: boolean; code: string }[] }
      ).checks.find((c) => !c.ok && c.code !== 'skipped');
      say(`  one flipped byte → ✗ ${broken?.check} ${broken?.code}\n`);
      const summary = {
        ok: true,
        root,
        package: pkg,
        cross_checks: cross.checks,
        tampered_check: broken ?? null,
      };
      if (values.json) printJson(ctx, summary);
      else
        ctx.stderr(
          `\ndemo complete: the session was recorded, sealed and verified offline${values.keep ? `; files kept in ${dir}` : ''}\n`,
        );
      return 0;
    } finally {
      if (!values.keep) rmSync(dir, { recursive: true, force: true });
    }
  },
};
