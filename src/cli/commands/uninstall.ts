/** `tally uninstall <agent>`: removes only the hooks Tally added to the agent's settings. */
import { existsSync, rmSync } from 'node:fs';
import { parseSettings, readSettingsFile, settingsText } from '../../capture/hook-settings.js';
import { agentOf, settingsTarget, writeSettingsFile } from '../agent-hooks.js';
import { type Command, parseFlags, printJson } from '../command.js';
import { INSTALLERS } from '../installers.js';
import { uninstallMcpServers } from '../mcp-servers.js';
import { assertInProject } from '../project-place.js';

export const command: Command = {
  summary: 'remove only the hooks Tally added to the agent’s settings',
  usage: `usage: tally uninstall ${Object.keys(INSTALLERS).join('|')} [--scope project|user|managed] [--dry-run] [--json]\n       tally uninstall ${Object.keys(INSTALLERS).join('|')} --mcp [--dry-run] [--json]   (put the MCP servers back as they were)`,
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      scope: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      mcp: { type: 'boolean' },
    });
    const installer = agentOf(positionals);
    if (values.mcp)
      return uninstallMcpServers(ctx, installer.agent, values['dry-run'] === true, values.json === true);
    const { scope, path, root } = settingsTarget(ctx, installer, values.scope);
    const existed = existsSync(path);
    if (installer.wholeFile) {
      if (scope === 'project') assertInProject(path, root);
      const ours = existed && installer.wholeFile.isOurs(readSettingsFile(path));
      if (ours && !values['dry-run']) rmSync(path, { force: true });
      if (values.json)
        printJson(ctx, {
          agent: installer.agent,
          scope,
          path,
          removed: ours,
          dry_run: values['dry-run'] === true,
        });
      else ctx.stderr(ours ? `removed Tally's plugin ${path}\n` : `no Tally plugin at ${path}\n`);
      return 0;
    }
    const existing = existed ? readSettingsFile(path) : undefined;
    const before = parseSettings(existing, path, installer.dialect);
    const after = installer.remove(before);
    const removed = JSON.stringify(before) !== JSON.stringify(after);
    if (!values['dry-run'] && removed) {
      if (scope === 'managed' && installer.ownManagedFile) rmSync(path, { force: true });
      // Edited in place: only Tally's hooks go, every other byte stays.
      else
        writeSettingsFile(
          path,
          settingsText(existing, after, path, installer.dialect),
          scope === 'managed' ? 0o644 : 0o600,
        );
    }
    if (values.json)
      printJson(ctx, { agent: installer.agent, scope, path, removed, dry_run: values['dry-run'] === true });
    else ctx.stderr(removed ? `removed Tally's hooks from ${path}\n` : `no Tally hooks in ${path}\n`);
    return 0;
  },
};
