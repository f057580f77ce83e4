/**
 * What `tally run` checks before it starts the agent: nothing in the settings the agent will read
 * may switch off the hooks the run wires, and no other hook may sit at the event where Tally
 * judges a call. A switch the run overrides for itself — a key of a file the run replaces with its
 * own copy (Gemini CLI's and Qwen Code's user settings), or one the agent lets the run's own
 * settings beat (Claude Code's `--settings` with `disableAllHooks: false` wins over every
 * non-managed file in the pinned version) — is neutralised and said; any other is refused, naming
 * the file and the key. Another hook at the judged event is refused unless `--allow-other-hooks`:
 * it can answer "allow" with another input after Tally allowed the call, which the verifier then
 * catches only after it ran.
 */
import {
  type HookSwitch,
  hookSwitches,
  hookSwitchesInCommand,
  type Whereabouts,
} from '../capture/hook-switches.js';
import { UsageError } from './command.js';

export interface Preflight {
  /** Switches this run overrides for itself. */
  neutralised: HookSwitch[];
  /** Other hooks at the judged event, run beside Tally's because --allow-other-hooks was given. */
  otherHooks: HookSwitch[];
}

/** Whether the run's own settings beat this switch (docs/agents.md: what can switch the hooks off). */
function overridden(harness: string, s: HookSwitch): boolean {
  if (s.kind === 'other-hook') return false;
  if (harness === 'claude-code') return s.key === '/disableAllHooks' && s.scope !== 'managed';
  // Codex is started with `-c features.hooks=true`, which beats every config file.
  if (harness === 'codex') return s.scope !== 'managed';
  if (harness === 'gemini-cli' || harness === 'qwen-code')
    return s.scope === 'user' || (s.scope === 'system-defaults' && s.kind === 'hooks-off');
  return false;
}

const WHAT: Record<HookSwitch['kind'], string> = {
  'hooks-off': 'switches off every hook',
  'tally-hook-off': "switches off Tally's hook",
  'other-hook': 'is a hook that is not Tally’s',
  'managed-only': 'allows only managed hooks',
};

export function describeSwitch(s: HookSwitch): string {
  return `${s.path} ${s.key}${s.hook ? ` (${s.hook})` : ''}`;
}

export function preflightRun(
  harness: string,
  argv: readonly string[],
  where: Whereabouts,
  allowOtherHooks: boolean,
): Preflight {
  const inCommand = hookSwitchesInCommand(harness, argv, where.env);
  if (inCommand.length > 0)
    throw new UsageError(
      `${inCommand.join(' and ')} would make the agent run no hook, so nothing it did would be judged or recorded: drop it and run again`,
    );
  const found = hookSwitches(harness, where, argv);
  const refused = found.filter((s) => s.kind !== 'other-hook' && !overridden(harness, s));
  if (refused.length > 0)
    throw new UsageError(
      [
        'the agent would not run the hooks this run wires, so nothing it did would be judged:',
        ...refused.map((s) => `  ${describeSwitch(s)} ${WHAT[s.kind]}`),
        'Remove that key (it is the agent’s own settings; an earlier session may have written it) and run again.',
      ].join('\n'),
    );
  const others = found.filter((s) => s.kind === 'other-hook');
  if (others.length > 0 && !allowOtherHooks)
    throw new UsageError(
      [
        'other hooks run where Tally judges each call; one can answer "allow" with another input after Tally allowed the call:',
        ...others.map((s) => `  ${describeSwitch(s)}`),
        'Remove them, or pass --allow-other-hooks to run beside them (the session’s start record names them).',
      ].join('\n'),
    );
  return { neutralised: found.filter((s) => overridden(harness, s)), otherHooks: others };
}
