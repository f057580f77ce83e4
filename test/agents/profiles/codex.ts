/**
 * Codex (`codex exec --json`): OpenAI Responses API through a custom model provider in
 * $CODEX_HOME/config.toml, everything else that would reach the network switched off there.
 * User hooks go in $CODEX_HOME/hooks.json (pass them as a file) and run only once trusted.
 */
import { join } from 'node:path';
import { startResponsesServer } from '../model/openai-responses.js';
import { trustCodexHooks } from './codex-trust.js';
import { toToml } from './toml.js';
import { type AgentProfile, jsonLines, merge } from './types.js';

export const KEY_VAR = 'TALLY_SCRIPTED_MODEL_KEY';

export function codexConfig(modelUrl: string): Record<string, unknown> {
  return {
    // A model slug Codex knows: an unknown one loses the apply_patch tool.
    model: 'gpt-5.5',
    model_provider: 'scripted',
    check_for_update_on_startup: false,
    model_providers: {
      scripted: { name: 'scripted', base_url: `${modelUrl}/v1`, wire_api: 'responses', env_key: KEY_VAR },
    },
    analytics: { enabled: false },
    feedback: { enabled: false },
    features: {
      plugins: false,
      remote_plugin: false,
      plugin_sharing: false,
      apps: false,
      tool_suggest: false,
      enable_request_compression: false,
    },
  };
}

export const codex: AgentProfile = {
  startModel: startResponsesServer,
  prepare(ctx) {
    const args = ['exec', '--json', '--skip-git-repo-check'];
    if (ctx.permissive) args.push('--dangerously-bypass-approvals-and-sandbox');
    args.push(ctx.prompt);
    return {
      args,
      env: { CODEX_HOME: join(ctx.home, '.codex'), [KEY_VAR]: 'sk-scripted-test-key' },
      files: { '.codex/config.toml': toToml(merge(codexConfig(ctx.modelUrl), ctx.settings)) },
    };
  },
  parse(stdout) {
    return { events: jsonLines(stdout) };
  },
  async beforeSpawn(ctx, bin, env) {
    return ctx.trustHooks ? trustCodexHooks(bin, ctx.cwd, env) : undefined;
  },
};
