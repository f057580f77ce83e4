import type { AgentName } from '../install.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { geminiCli } from './gemini-cli.js';
import { opencode } from './opencode.js';
import { qwenCode } from './qwen-code.js';
import type { AgentProfile } from './types.js';

export const PROFILES: Record<AgentName, AgentProfile> = {
  'claude-code': claudeCode,
  codex,
  'gemini-cli': geminiCli,
  'qwen-code': qwenCode,
  opencode,
};
