/**
 * `tally install <agent>`: the agent's native hooks, computed from the portable registration, merged
 * into its settings without touching anything else. `tally uninstall <agent>` removes only what
 * Tally added.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseSettings, readSettingsFile, settingsText } from '../../capture/hook-settings.js';
import { tallyHome } from '../../core/home.js';
import type { JsonObject } from '../../core/json.js';
import { RecorderClient } from '../../recorder/client.js';
import { SECRET_ENV } from '../../recorder/config.js';
import {
  agentOf,
  hookShim,
  makeFolder,
  projectRegistration,
  settingsTarget,
  tallyCommand,
  writeSettingsFile,
} from '../agent-hooks.js';
import { type Command, FailureError, parseFlags, printJson, UsageError } from '../command.js';
import { INSTALLERS } from '../installers.js';
import { installMcpServers } from '../mcp-servers.js';
import { assertInProject } from '../project-place.js';
import { placesOf } from '../session-context.js';

const install: Command = {
  summary: "write the agent's native hooks for the recorder, from the registration",
  usage: [
    `usage: tally install ${Object.keys(INSTALLERS).join('|')} [--registration FILE]`,
    '                     [--scope project|user|managed] [--agent NAME] [--transport auto|http|command]',
    '                     [--agent-bin PATH] [--managed-hooks-only] [--mcp] [--dry-run] [--json]',
    '',
    'One native hook per covered event, pointing at this user’s recorder; each one’s timeout is the',
    "event's whole intercept deadline plus a margin, and it fails closed exactly when an intercept",
    'subscription there is fail-closed (Tally’s certificate judge is, at the tool-call event).',
    'Merged into the scope’s settings file; everything else in it is kept. What the agent cannot',
    'express is printed. docs/agents.md lists each agent’s events, answers and files.',
    '',
    '  --scope        project (the project’s settings, default), user (the home’s), or managed (the',
    '                 system file: root-owned, the one scope the agent cannot rewrite — docs/security.md)',
    '  --agent NAME   sessions the recorder opens for the agent run under this agent’s certificate',
    '  --transport    Claude Code and Qwen Code. http: it posts straight to the recorder (needs',
    '                 TALLY_RECORDER_SECRET in its environment: eval "$(tally recorder env)"; Qwen Code keeps',
    '                 its fail-closed hooks on the shim); command: every hook through the shim (slower, needs',
    '                 nothing); auto (default): http when TALLY_RECORDER_SECRET is set.',
    '                 Gemini CLI and Codex always use the command shim (tally hook <agent>).',
    '  --agent-bin    Codex: the codex executable (default: codex on PATH). Codex skips hooks it does not',
    '                 trust; install trusts Tally’s own through Codex itself (its app-server), never',
    '                 the user’s. Codex hooks are user ($CODEX_HOME/hooks.json, default) or managed',
    '                 (/etc/codex/hooks.json, which needs no trust).',
    '  --managed-hooks-only  Claude Code, --scope managed: also write allowManagedHooksOnly, so no hook but',
    '                 the managed ones runs — none of the project’s or the user’s (which the agent can write,',
    '                 and which could rewrite a call after Tally allowed it), nor `tally run`’s own (the',
    '                 managed hooks report into its session instead). Off by default: it stops every hook of theirs.',
    '  --mcp          instead of hooks, put the project’s stdio MCP servers behind `tally mcp`, changing',
    '                 only their command lines (docs/mcp.md): Claude Code’s .mcp.json, Gemini CLI’s',
    '                 .gemini/settings.json, Qwen Code’s .qwen/settings.json, Cursor’s .cursor/mcp.json,',
    '                 Codex’s .codex/config.toml (edited in place, comments kept; Codex is asked, with',
    '                 --agent-bin, whether it loads the file and which servers it runs outside the gateway),',
    '                 OpenCode’s opencode.json[c] and .opencode/opencode.json[c]. Remote (url) servers are',
    '                 left alone and named. `tally uninstall <agent> --mcp` puts them back',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      registration: { type: 'string' },
      scope: { type: 'string' },
      agent: { type: 'string' },
      transport: { type: 'string' },
      'agent-bin': { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      mcp: { type: 'boolean' },
      'managed-hooks-only': { type: 'boolean' },
    });
    const installer = agentOf(positionals);
    const managedOnly = values['managed-hooks-only'] === true;
    if (managedOnly && (installer.agent !== 'claude-code' || values.scope !== 'managed'))
      throw new UsageError('--managed-hooks-only is for claude-code with --scope managed');
    if (values.mcp)
      return installMcpServers(ctx, installer.agent, {
        dryRun: values['dry-run'] === true,
        json: values.json === true,
        ...(values['agent-bin'] ? { agentBin: values['agent-bin'] } : {}),
      });
    const transport = values.transport ?? 'auto';
    if (!['auto', 'http', 'command'].includes(transport))
      throw new UsageError('--transport must be auto, http or command');
    if (transport !== 'auto' && !installer.transports.includes(transport as 'http' | 'command'))
      throw new UsageError(
        `--transport ${transport}: ${installer.label} hooks can only be ${installer.transports.join(' or ')}`,
      );
    const chosen: 'http' | 'command' =
      transport === 'auto'
        ? installer.transports.includes('http') && ctx.env[SECRET_ENV]
          ? 'http'
          : 'command'
        : (transport as 'http' | 'command');
    const { scope, path, root } = settingsTarget(ctx, installer, values.scope);
    const where = placesOf(ctx);
    const { registration, path: registrationPath } = projectRegistration(where, ctx.cwd, values.registration);
    const client = await RecorderClient.of(tallyHome(ctx.env), ctx.env);
    const plans = installer.plan(registration, chosen);
    const sh = hookShim(ctx.env);
    const wiring = {
      port: client.port,
      tally: tallyCommand(),
      ...(sh ? { sh } : {}),
      transport: chosen,
      ...(values.agent ? { agent: values.agent } : {}),
    };
    let after: unknown;
    let text: string;
    let hooks: Record<string, JsonObject[]> = {};
    if (installer.wholeFile) {
      // A file of Tally's own: in the project when it is the project's, never someone else's.
      if (scope === 'project') assertInProject(path, root);
      if (existsSync(path) && !installer.wholeFile.isOurs(readSettingsFile(path)))
        throw new FailureError(`${path} exists and is not Tally's; nothing was changed`);
      text = installer.wholeFile.render(registration, wiring);
      after = text;
    } else {
      hooks = installer.hooks(registration, wiring);
      const own = scope === 'managed' && installer.ownManagedFile;
      // The user's file is edited in place: what Tally does not change keeps its bytes.
      const existing = !own && existsSync(path) ? readSettingsFile(path) : undefined;
      let merged = installer.merge(parseSettings(existing, path, installer.dialect), hooks);
      if (managedOnly) merged = { ...merged, allowManagedHooksOnly: true };
      after = merged;
      text = settingsText(existing, merged, path, installer.dialect);
    }
    let after_write: Record<string, unknown> | undefined;
    if (!values['dry-run']) {
      makeFolder(dirname(path));
      writeSettingsFile(path, text, scope === 'managed' ? 0o644 : 0o600);
      if (installer.afterWrite)
        // The file is written: an agent that cannot be asked leaves the hooks untrusted, said below.
        after_write = await installer
          .afterWrite(path, {
            bin: values['agent-bin'] ?? installer.agent,
            scope,
            hooks,
            env: ctx.env,
            cwd: ctx.cwd,
          })
          .catch((error: Error) => ({ trust: 'untrusted', trust_error: error.message }));
    }
    const report = {
      agent: installer.agent,
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
        transport: p.transport,
        backends: p.backends,
      })),
      cannot_express: installer.gaps,
      ...(managedOnly ? { managed_hooks_only: true } : {}),
      ...(after_write ? after_write : {}),
    };
    const untrusted = after_write?.trust === 'untrusted';
    if (values.json) printJson(ctx, values['dry-run'] ? { ...report, settings: after } : report);
    else {
      ctx.stderr(
        `${values['dry-run'] ? 'would write' : 'wrote'} ${plans.length} ${installer.label} hooks (${chosen}) to ${path}\n`,
      );
      for (const p of report.hooks)
        ctx.stderr(
          `  ${p.event.padEnd(19)} → ${p.ahp_event.padEnd(24)} ${p.transport.padEnd(7)} timeout ${p.timeout_s}s ${p.fail_closed ? 'fails closed' : 'fails open'}\n`,
        );
      ctx.stderr(`what ${installer.label} cannot express:\n`);
      for (const gap of installer.gaps) ctx.stderr(`  - ${gap}\n`);
      if (chosen === 'http')
        ctx.stderr(
          `${installer.label} sends the hooks' token from its environment: run it where ${SECRET_ENV} is set (eval "$(tally recorder env)"), or use tally run.\n`,
        );
      if (scope !== 'managed')
        ctx.stderr(
          'note: the agent can edit this file and disable the hooks for its next session; only --scope managed is out of its reach\n',
        );
      if (after_write?.trust === 'trusted')
        ctx.stderr(
          `trusted Tally's ${String(after_write.hooks_trusted)} hooks through ${installer.label} itself\n`,
        );
      if (untrusted && after_write?.trust_error !== undefined)
        ctx.stderr(
          `could not have ${installer.label} trust the hooks written: ${String(after_write.trust_error)} (--agent-bin names the ${installer.agent} executable). ${installer.label} skips untrusted hooks without a word\n`,
        );
      else if (untrusted)
        ctx.stderr(
          `${installer.label} does not run the hooks written: of ${String(after_write?.hooks_written)} written it lists ${String(after_write?.hooks_listed)} as Tally wrote them, ${String(after_write?.hooks_trusted)} trusted and on; it will skip the rest without a word (a hooks feature switched off in its config.toml lists none; a file changed since Tally wrote it lists fewer). Review them in its /hooks screen, or rerun with --agent-bin <path to ${installer.agent}>\n`,
        );
      if (values['dry-run']) ctx.stdout(text);
    }
    return untrusted ? 1 : 0;
  },
};

export const command = install;
