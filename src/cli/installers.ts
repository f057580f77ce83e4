/**
 * What `tally install`, `tally uninstall` and `tally run` need to know about each agent: where its
 * settings live per scope, the hooks Tally writes there (computed from the registration), how they
 * merge in and out, and what the agent cannot express.
 */
import type { Registration } from '../ahp/registration/types.js';
import { withCertificateJudge } from '../boundary/certificate-backend.js';
import { CLAUDE_CODE_GAPS } from '../capture/claude-code/answer.js';
import { claudeCodeHooks, planHooks } from '../capture/claude-code/hooks.js';
import { settingsPath, withoutTallyHooks, withTallyHooks } from '../capture/claude-code/settings.js';
import { CODEX_GAPS } from '../capture/codex/answer.js';
import {
  codexHooksPath,
  planCodexHooks,
  withCodexTallyHooks,
  withoutCodexTallyHooks,
} from '../capture/codex/hooks.js';
import { trustWrittenHooks } from '../capture/codex/own-hooks.js';
import { CURSOR_GAPS } from '../capture/cursor/answer.js';
import {
  cursorHooks,
  cursorHooksPath,
  planCursorHooks,
  withCursorTallyHooks,
  withoutCursorTallyHooks,
} from '../capture/cursor/hooks.js';
import { GEMINI_CLI_GAPS } from '../capture/gemini-cli/answer.js';
import {
  geminiCliHooks,
  geminiSettingsPath,
  planGeminiCliHooks,
  withGeminiTallyHooks,
  withoutGeminiTallyHooks,
} from '../capture/gemini-cli/hooks.js';
import type { JsonDialect } from '../capture/jsonc.js';
import { OPENCODE_GAPS } from '../capture/opencode/answer.js';
import { isTallyPlugin, openCodePlugin, openCodePluginPath } from '../capture/opencode/plugin.js';
import { OPENCODE_EVENTS, type OpenCodeEvent } from '../capture/opencode/translate.js';
import { type NativeEventSpec, planNativeHooks, shimHooksBlock } from '../capture/plan.js';
import {
  planQwenCodeHooks,
  QWEN_CODE_GAPS,
  qwenCodeHooks,
  qwenSettingsPath,
  qwenTransport,
  withoutQwenTallyHooks,
  withQwenTallyHooks,
} from '../capture/qwen-code/hooks.js';
import type { JsonObject } from '../core/json.js';
import { UsageError } from './command.js';
import { tallyParts } from './tally-bin.js';

export type InstallScope = 'project' | 'user' | 'managed';

/** One planned native hook, as install reports it. */
export interface PlannedHook {
  event: string;
  ahpEvent: string;
  timeoutS: number;
  failClosed: boolean;
  transport: 'http' | 'command';
  backends: string[];
}

export interface HookWiring {
  port: number;
  tally: string;
  /** The POSIX sh shim command, when this machine has sh and curl (command hooks run it). */
  sh?: string;
  agent?: string;
  transport: 'http' | 'command';
}

export interface Installer {
  agent: string;
  label: string;
  /** Transports the agent's hooks can use (the first is what `auto` falls back to). */
  transports: readonly ('http' | 'command')[];
  path(scope: InstallScope, root: string, home: string, env: NodeJS.ProcessEnv): string;
  /** A managed scope that is a file of Tally's own (removed whole), not merged into. */
  ownManagedFile: boolean;
  plan(registration: Registration | null, transport: 'http' | 'command'): PlannedHook[];
  hooks(registration: Registration | null, wiring: HookWiring): Record<string, JsonObject[]>;
  merge(settings: JsonObject, hooks: Record<string, JsonObject[]>): JsonObject;
  remove(settings: JsonObject): JsonObject;
  /** How the agent reads its settings file: install and uninstall read it the same way and edit it in place. */
  dialect: JsonDialect;
  gaps: readonly string[];
  /** The scopes it has, the first the default. */
  scopes: readonly InstallScope[];
  /** An agent whose hook is a whole file of Tally's own (OpenCode's plugin), not a merged block. */
  wholeFile?: {
    render(registration: Registration | null, wiring: HookWiring): string;
    isOurs(text: string): boolean;
  };
  /** Runs after the file is written (Codex: trusting Tally's hooks through Codex itself). */
  afterWrite?: (path: string, context: AfterWrite) => Promise<JsonObject>;
}

export interface AfterWrite {
  /** The agent's executable, for installers that must ask the agent. */
  bin: string;
  scope: InstallScope;
  /** The hooks block written into the file. */
  hooks: Record<string, JsonObject[]>;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function shimPlans(
  plans: readonly {
    event: string;
    ahpEvent: string;
    timeoutS: number;
    failClosed: boolean;
    backends: string[];
  }[],
): PlannedHook[] {
  return plans.map((p) => ({
    event: p.event,
    ahpEvent: p.ahpEvent,
    timeoutS: p.timeoutS,
    failClosed: p.failClosed,
    transport: 'command',
    backends: p.backends,
  }));
}

const claudeCode: Installer = {
  agent: 'claude-code',
  label: 'Claude Code',
  transports: ['command', 'http'],
  path: (scope, root, home) => settingsPath(scope, root, home),
  ownManagedFile: true,
  plan: (registration, transport) =>
    planHooks(withCertificateJudge(registration)).map((p) => ({
      event: p.event,
      ahpEvent: p.ahpEvent,
      timeoutS: p.timeoutS,
      failClosed: p.failClosed,
      transport: transport === 'command' ? 'command' : p.transport,
      backends: p.backends,
    })),
  hooks: (registration, wiring) =>
    claudeCodeHooks(planHooks(withCertificateJudge(registration)), {
      port: wiring.port,
      tally: wiring.tally,
      ...(wiring.sh ? { sh: wiring.sh } : {}),
      transport: wiring.transport,
      ...(wiring.agent ? { agent: wiring.agent } : {}),
    }),
  merge: withTallyHooks,
  remove: withoutTallyHooks,
  dialect: 'json',
  gaps: CLAUDE_CODE_GAPS,
  scopes: ['project', 'user', 'managed'],
};

const geminiCli: Installer = {
  agent: 'gemini-cli',
  label: 'Gemini CLI',
  transports: ['command'],
  path: geminiSettingsPath,
  ownManagedFile: false,
  plan: (registration) => shimPlans(planGeminiCliHooks(withCertificateJudge(registration))),
  hooks: (registration, wiring) =>
    geminiCliHooks(planGeminiCliHooks(withCertificateJudge(registration)), {
      tally: wiring.tally,
      ...(wiring.sh ? { sh: wiring.sh } : {}),
      ...(wiring.agent ? { agent: wiring.agent } : {}),
    }),
  merge: withGeminiTallyHooks,
  remove: withoutGeminiTallyHooks,
  dialect: 'json-comments',
  gaps: GEMINI_CLI_GAPS,
  scopes: ['project', 'user', 'managed'],
};

const qwenCode: Installer = {
  agent: 'qwen-code',
  label: 'Qwen Code',
  transports: ['command', 'http'],
  path: qwenSettingsPath,
  ownManagedFile: false,
  plan: (registration, transport) =>
    planQwenCodeHooks(withCertificateJudge(registration)).map((p) => ({
      ...shimPlans([p])[0]!,
      transport: qwenTransport(p, transport),
    })),
  hooks: (registration, wiring) =>
    qwenCodeHooks(planQwenCodeHooks(withCertificateJudge(registration)), wiring),
  merge: withQwenTallyHooks,
  remove: withoutQwenTallyHooks,
  dialect: 'json-comments',
  gaps: QWEN_CODE_GAPS,
  scopes: ['project', 'user', 'managed'],
};

const codex: Installer = {
  agent: 'codex',
  label: 'Codex',
  transports: ['command'],
  path: (scope, _root, home, env) => codexHooksPath(scope, home, env),
  ownManagedFile: false,
  plan: (registration) => shimPlans(planCodexHooks(withCertificateJudge(registration))),
  hooks: (registration, wiring) =>
    shimHooksBlock(planCodexHooks(withCertificateJudge(registration)), {
      tally: wiring.tally,
      ...(wiring.sh ? { sh: wiring.sh } : {}),
      channel: 'codex',
      timeoutUnit: 's',
      ...(wiring.agent ? { agent: wiring.agent } : {}),
    }),
  merge: withCodexTallyHooks,
  remove: withoutCodexTallyHooks,
  dialect: 'json',
  gaps: CODEX_GAPS,
  scopes: ['user', 'managed'],
  afterWrite: async (path, context) => {
    // Managed hooks (/etc/codex) need no trust; the scope says so, not the path.
    if (context.scope === 'managed') return { trust: 'managed' };
    return trustWrittenHooks(path, context.hooks, context);
  },
};

const OPENCODE_AHP: Record<OpenCodeEvent, string> = {
  'event.session.created': 'session.start',
  'chat.message': 'turn.start',
  'tool.execute.before': 'tool.before',
  'tool.execute.after': 'tool.after',
  'event.session.idle': 'turn.end',
};

const OPENCODE_SPECS = Object.fromEntries(
  (Object.keys(OPENCODE_EVENTS) as OpenCodeEvent[]).map((e) => [
    e,
    { ahp: OPENCODE_AHP[e], tool: e.startsWith('tool.') },
  ]),
) as Record<OpenCodeEvent, NativeEventSpec>;
const notMerged = (): never => {
  throw new UsageError('OpenCode’s hook is a plugin file of Tally’s own, not a settings block');
};

const opencode: Installer = {
  agent: 'opencode',
  label: 'OpenCode',
  transports: ['command'],
  path: openCodePluginPath,
  ownManagedFile: true,
  plan: (registration) => shimPlans(planNativeHooks(withCertificateJudge(registration), OPENCODE_SPECS)),
  hooks: notMerged,
  merge: notMerged,
  remove: notMerged,
  dialect: 'jsonc',
  gaps: OPENCODE_GAPS,
  scopes: ['project', 'user'],
  wholeFile: {
    render: (registration, wiring) => {
      const before = planNativeHooks(withCertificateJudge(registration), OPENCODE_SPECS).find(
        (p) => p.event === 'tool.execute.before',
      )!;
      const [node, bin] = tallyParts();
      return openCodePlugin({
        node,
        tallyBin: bin,
        failClosed: before.failClosed,
        timeoutMs: before.timeoutS * 1000,
        ...(wiring.agent ? { agent: wiring.agent } : {}),
      });
    },
    isOurs: isTallyPlugin,
  },
};

const cursor: Installer = {
  agent: 'cursor',
  label: 'Cursor',
  transports: ['command'],
  path: (scope, root, home) => cursorHooksPath(scope, root, home),
  ownManagedFile: false,
  plan: (registration) => shimPlans(planCursorHooks(withCertificateJudge(registration))),
  hooks: (registration, wiring) =>
    cursorHooks(planCursorHooks(withCertificateJudge(registration)), wiring.tally, wiring.agent, wiring.sh),
  merge: withCursorTallyHooks,
  remove: withoutCursorTallyHooks,
  dialect: 'json',
  gaps: CURSOR_GAPS,
  scopes: ['project', 'user'],
};

export const INSTALLERS: Readonly<Record<string, Installer>> = {
  'claude-code': claudeCode,
  'gemini-cli': geminiCli,
  'qwen-code': qwenCode,
  codex,
  opencode,
  cursor,
};
