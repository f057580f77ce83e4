/**
 * Claude Code (`claude -p`): Anthropic Messages API at ANTHROPIC_BASE_URL, user settings in
 * ~/.claude/settings.json (hooks live there), state under CLAUDE_CODE_TMPDIR and XDG_RUNTIME_DIR
 * (else it shares /tmp/claude-<uid> with every other Claude Code on the machine).
 */
import { startAnthropicServer } from '../model/anthropic.js';
import { type AgentProfile, jsonLines, parseJsonOutput } from './types.js';

export const claudeCode: AgentProfile = {
  startModel: startAnthropicServer,
  prepare(ctx) {
    const format = ctx.outputFormat ?? 'json';
    const args = ['-p', ctx.prompt, '--output-format', format];
    if (format === 'stream-json') args.push('--verbose', '--include-hook-events');
    // As root the skip-permissions flag refuses to start unless IS_SANDBOX=1 says this is a sandbox.
    if (ctx.permissive) args.push('--dangerously-skip-permissions');
    const files: Record<string, string> = {};
    if (Object.keys(ctx.settings).length > 0)
      files['.claude/settings.json'] = JSON.stringify(ctx.settings, null, 2);
    return {
      args,
      files,
      env: {
        ANTHROPIC_BASE_URL: ctx.modelUrl,
        ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_TMPDIR: ctx.tmp,
        ...(ctx.permissive ? { IS_SANDBOX: '1' } : {}),
      },
    };
  },
  parse(stdout, format) {
    return (format ?? 'json') === 'json' ? { json: parseJsonOutput(stdout) } : { events: jsonLines(stdout) };
  },
};
