/**
 * What the tests of writes into a protected folder share: the policy they judge under (every shell
 * command allowed, `protected/` forbidden to write, the control plane left out), and whether a real
 * program they run as the oracle is on this machine.
 */
import { spawnSync } from 'node:child_process';
import type { ActionPolicy } from '../../../src/evidence/policy/patterns.js';

export const PROTECTED: ActionPolicy = {
  allow: ['Bash'],
  forbid: ['Write(protected/**)'],
  escalate: [],
  controlPlane: 'allow',
};

/** True when `program --version` runs here. */
export const have = (program: string): boolean =>
  spawnSync(program, ['--version'], { stdio: 'ignore' }).error === undefined;
