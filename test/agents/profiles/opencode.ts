/**
 * OpenCode (`opencode run --format json`): an OpenAI-compatible provider in
 * ~/.config/opencode/opencode.json pointing at the scripted Chat Completions server. It has no
 * settings-file hooks; a JS plugin in ~/.config/opencode/plugin/ receives its events (pass one as a
 * file, see hooks.ts opencodePlugin).
 */
import { startChatServer } from '../model/openai-chat.js';
import { type AgentProfile, jsonLines, merge } from './types.js';

export function opencodeConfig(modelUrl: string, permissive: boolean): Record<string, unknown> {
  return {
    model: 'scripted/scripted-model',
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: `${modelUrl}/v1`, apiKey: 'sk-scripted-test-key' },
        models: { 'scripted-model': { name: 'Scripted model', tool_call: true } },
      },
    },
    autoupdate: false,
    share: 'disabled',
    ...(permissive ? { permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' } } : {}),
  };
}

export const opencode: AgentProfile = {
  startModel: startChatServer,
  prepare(ctx) {
    return {
      args: ['run', '--format', ctx.outputFormat ?? 'json', ctx.prompt],
      env: {
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      },
      files: {
        '.config/opencode/opencode.json': JSON.stringify(
          merge(opencodeConfig(ctx.modelUrl, ctx.permissive), ctx.settings),
          null,
          2,
        ),
      },
    };
  },
  parse(stdout) {
    return { events: jsonLines(stdout) };
  },
};
