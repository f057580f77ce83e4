/**
 * `tally install <agent>`: the agent's native hooks, computed from the portable registration, merged
 * into its settings without touching anything else (only Claude Code so far). `tally uninstall
 * <agent>` removes only what Tally added.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CLAUDE_CODE_GAPS } from '../../capture/claude-code/answer.js';
import { claudeCodeHooks } from '../../capture/claude-code/hooks.js';
import { parseSettings, withTallyHooks } from '../../capture/claude-code/settings.js';
import { tallyHome } from '../../core/home.js';
import { RecorderClient } from '../../recorder/client.js';
import { SECRET_ENV } from '../../recorder/config.js';
import { writeAtomic } from '../../session/store.js';
import {
  agentOf,
  claudeCodePlan,
  projectRegistration,
  settingsTarget,
  tallyCommand,
} from '../agent-hooks.js';
import { type Command, parseFlags, printJson, UsageError } from '../command.js';
import { installMcpServers } from '../mcp-servers.js';
import { placesOf } from '../session-context.js';

const install: Command = {
  summary: "write the agent's native hooks for the recorder, from the registration",
  usage: [
    'usage: tally install claude-code [--registration FILE] [--scope project|user|managed] [--agent NAME]',
    '                                 [--transport auto|http|command] [--dry-run] [--json]',
    '',
    'One native hook per Claude Code event, pointing at this user’s recorder; each one’s timeout is the',
    "event's whole intercept deadline plus a margin, and it fails closed (onFailure: block) exactly",
    'when an intercept subscription there is fail-closed (Tally’s certificate judge is, at PreToolUse).',
    'Merged into the scope’s settings file; everything else in it is kept.',
    '',
    '  --scope        project (.claude/settings.json, default), user (~/.claude/settings.json), or',
    '                 managed (/etc/claude-code/managed-settings.d/tally.json: root-owned, the one scope',
    '                 the agent cannot rewrite — see docs/security.md)',
    '  --agent NAME   sessions the recorder opens for Claude Code run under this agent’s certificate',
    '  --transport    http: Claude Code posts straight to the recorder (needs TALLY_RECORDER_SECRET in its',
    '                 environment: eval "$(tally recorder env)"); command: every hook through the shim',
    '                 (slower, needs nothing); auto (default): http when TALLY_RECORDER_SECRET is set here',
    '  --mcp          instead: put the project’s .mcp.json stdio servers behind `tally mcp` (docs/mcp.md)',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      registration: { type: 'string' },
      scope: { type: 'string' },
      agent: { type: 'string' },
      transport: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      mcp: { type: 'boolean' },
    });
    agentOf(positionals);
    if (values.mcp) return installMcpServers(ctx, values['dry-run'] === true, values.json === true);
    const transport = values.transport ?? 'auto';
    if (!['auto', 'http', 'command'].includes(transport))
      throw new UsageError('--transport must be auto, http or command');
    const chosen =
      transport === 'auto' ? (ctx.env[SECRET_ENV] ? 'http' : 'command') : (transport as 'http' | 'command');
    const { scope, path } = settingsTarget(ctx, values.scope);
    const where = placesOf(ctx);
    const { registration, path: registrationPath } = projectRegistration(where, ctx.cwd, values.registration);
    const client = await RecorderClient.of(tallyHome(ctx.env), ctx.env);
    const plans = claudeCodePlan(registration);
    const hooks = claudeCodeHooks(plans, {
      port: client.port,
      tally: tallyCommand(),
      transport: chosen,
      ...(values.agent ? { agent: values.agent } : {}),
    });
    const before =
      scope === 'managed'
        ? {}
        : parseSettings(existsSync(path) ? readFileSync(path, 'utf8') : undefined, path);
    const after = withTallyHooks(before, hooks);
    const text = `${JSON.stringify(after, null, 2)}\n`;
    if (!values['dry-run']) {
      mkdirSync(dirname(path), { recursive: true });
      writeAtomic(path, text, scope === 'managed' ? 0o644 : 0o600);
    }
    const report = {
      agent: 'claude-code',
      scope,
      path,
      transport: chosen,
      registration: registrationPath ?? null,
      dry_run: values['dry-run'] === true,
      hooks: plans.map((p) => ({
        event: p.event,
        ahp_event: p.ahpEvent,
        timeout_s: p.timeoutS,
        fail_closed: p.failClosed,
        transport: chosen === 'command' ? 'command' : p.transport,
        backends: p.backends,
      })),
      cannot_express: CLAUDE_CODE_GAPS,
    };
    if (values.json) printJson(ctx, values['dry-run'] ? { ...report, settings: after } : report);
    else {
      ctx.stderr(
        `${values['dry-run'] ? 'would write' : 'wrote'} ${plans.length} Claude Code hooks (${chosen}) to ${path}\n`,
      );
      for (const p of report.hooks)
        ctx.stderr(
          `  ${p.event.padEnd(19)} → ${p.ahp_event.padEnd(24)} ${p.transport.padEnd(7)} timeout ${p.timeout_s}s ${p.fail_closed ? 'fails closed' : 'fails open'}\n`,
        );
      ctx.stderr('what Claude Code cannot express:\n');
      for (const gap of CLAUDE_CODE_GAPS) ctx.stderr(`  - ${gap}\n`);
      if (chosen === 'http')
        ctx.stderr(
          `Claude Code sends the recorder's secret from its environment: run it where ${SECRET_ENV} is set (eval "$(tally recorder env)"), or use tally run.\n`,
        );
      if (scope !== 'managed')
        ctx.stderr(
          'note: the agent can edit this file and disable the hooks for its next session; only --scope managed is out of its reach\n',
        );
      if (values['dry-run']) ctx.stdout(text);
    }
    return 0;
  },
};

export const command = install;
