/** `tally uninstall <agent>`: removes only the hooks Tally added to the agent's settings. */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { parseSettings, withoutTallyHooks } from '../../capture/claude-code/settings.js';
import { writeAtomic } from '../../session/store.js';
import { agentOf, settingsTarget } from '../agent-hooks.js';
import { type Command, parseFlags, printJson } from '../command.js';
import { uninstallMcpServers } from '../mcp-servers.js';

export const command: Command = {
  summary: 'remove only the hooks Tally added to the agent’s settings',
  usage:
    'usage: tally uninstall claude-code [--scope project|user|managed] [--dry-run] [--json]\n       tally uninstall claude-code --mcp   (put the .mcp.json servers back as they were)',
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      scope: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      mcp: { type: 'boolean' },
    });
    agentOf(positionals);
    if (values.mcp) return uninstallMcpServers(ctx, values['dry-run'] === true, values.json === true);
    const { scope, path } = settingsTarget(ctx, values.scope);
    const existed = existsSync(path);
    const before = parseSettings(existed ? readFileSync(path, 'utf8') : undefined, path);
    const after = withoutTallyHooks(before);
    const removed = JSON.stringify(before) !== JSON.stringify(after);
    if (!values['dry-run'] && removed) {
      if (scope === 'managed') rmSync(path, { force: true });
      else writeAtomic(path, `${JSON.stringify(after, null, 2)}\n`, 0o600);
    }
    if (values.json)
      printJson(ctx, { agent: 'claude-code', scope, path, removed, dry_run: values['dry-run'] === true });
    else ctx.stderr(removed ? `removed Tally's hooks from ${path}\n` : `no Tally hooks in ${path}\n`);
    return 0;
  },
};
