/**
 * Which agent's certificate judged each harness session of a project, kept on disk
 * (`<state>/sessions/former-agents.json`) when the recorder seals the session: a recorder started
 * again (after a crash, a stop, or the agent killing it) still opens that harness session's next
 * session under the same certificate. The agent can write this file as it can any of the user's;
 * docs/security.md says what that leaves.
 */
import { join } from 'node:path';
import { canonicalize, parseJson } from '../core/canonical.js';
import { readRegularFileSync } from '../core/regular-file.js';
import { writeAtomic } from './store.js';

const FILE = 'former-agents.json';
const TYPE = 'tally/former-agents/v1';
/** Harness sessions a project keeps, the most recently sealed last; the oldest go first. */
export const FORMER_KEPT_PER_PROJECT = 1_000;
/** 1,000 entries of a harness session id and an agent name each, with room to spare. */
const FILE_LIMIT = 1024 * 1024;
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

interface FormerAgent {
  harness_session: string;
  agent: string;
}

/** The file's entries; none when it is missing. Throws when it is there but unreadable or malformed. */
function entries(state: string): FormerAgent[] {
  let bytes: Buffer;
  try {
    bytes = readRegularFileSync(join(state, 'sessions', FILE), FILE_LIMIT);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const value = parseJson(bytes) as { type?: unknown; agents?: unknown };
  if (value.type !== TYPE || !Array.isArray(value.agents))
    throw new Error(`${FILE} is not a ${TYPE} document`);
  return value.agents.filter(
    (e): e is FormerAgent =>
      typeof e?.harness_session === 'string' && typeof e.agent === 'string' && AGENT_NAME.test(e.agent),
  );
}

/** The agent that judged `harnessSession` in this project when its session was last sealed. */
export function formerAgentOf(state: string, harnessSession: string): string | undefined {
  return entries(state).findLast((e) => e.harness_session === harnessSession)?.agent;
}

/** Keeps `agent` as the one that judged each of `harnessSessions` in this project. */
export function keepFormerAgent(state: string, harnessSessions: readonly string[], agent: string): void {
  if (harnessSessions.length === 0) return;
  let kept: FormerAgent[];
  try {
    kept = entries(state);
  } catch {
    kept = []; // a damaged file is replaced by what is known now
  }
  const sealed = new Set(harnessSessions);
  kept = kept.filter((e) => !sealed.has(e.harness_session));
  for (const h of harnessSessions) kept.push({ harness_session: h, agent });
  kept = kept.slice(-FORMER_KEPT_PER_PROJECT);
  writeAtomic(join(state, 'sessions', FILE), `${canonicalize({ type: TYPE, agents: kept })}\n`, 0o600);
}
