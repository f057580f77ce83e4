/**
 * Qwen Code (`qwen -p`): OpenAI Chat Completions at OPENAI_BASE_URL, settings (hooks included, in
 * Claude Code's format) in ~/.qwen/settings.json.
 */
import { startChatServer } from '../model/openai-chat.js';
import { type AgentProfile, merge, parseJsonOutput } from './types.js';

export const QWEN_SETTINGS = {
  security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false },
};

export const qwenCode: AgentProfile = {
  startModel: startChatServer,
  prepare(ctx) {
    const args = ['-p', ctx.prompt, '--output-format', ctx.outputFormat ?? 'json'];
    if (ctx.permissive) args.push('--yolo');
    return {
      args,
      env: {
        OPENAI_BASE_URL: `${ctx.modelUrl}/v1`,
        OPENAI_API_KEY: 'sk-scripted-test-key',
        OPENAI_MODEL: 'scripted-model',
      },
      files: { '.qwen/settings.json': JSON.stringify(merge(QWEN_SETTINGS, ctx.settings), null, 2) },
    };
  },
  parse(stdout) {
    return { json: parseJsonOutput(stdout) };
  },
};
