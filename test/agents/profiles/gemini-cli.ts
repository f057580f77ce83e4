/**
 * Gemini CLI (`gemini -p`): Gemini API at GOOGLE_GEMINI_BASE_URL with an API key, settings (hooks
 * included) in ~/.gemini/settings.json. Without `security.auth.selectedType` a base URL override
 * fails ("Invalid auth method selected"); folder trust, telemetry and updates are switched off.
 */
import { startGeminiServer } from '../model/gemini.js';
import { type AgentProfile, merge, parseJsonOutput } from './types.js';

export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
};

export const geminiCli: AgentProfile = {
  startModel: startGeminiServer,
  prepare(ctx) {
    const args = ['-p', ctx.prompt, '--output-format', ctx.outputFormat ?? 'json'];
    if (ctx.permissive) args.push('--yolo');
    return {
      args,
      env: {
        GOOGLE_GEMINI_BASE_URL: ctx.modelUrl,
        GEMINI_API_KEY: 'scripted-test-key',
        // Else it re-launches itself under a second node process to raise the heap limit.
        GEMINI_CLI_NO_RELAUNCH: 'true',
      },
      files: { '.gemini/settings.json': JSON.stringify(merge(GEMINI_SETTINGS, ctx.settings), null, 2) },
    };
  },
  parse(stdout) {
    return { json: parseJsonOutput(stdout) };
  },
};
