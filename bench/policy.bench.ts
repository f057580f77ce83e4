/**
 * evaluateAction per call on a realistic mix of tool calls (shell commands of everyday work and a few
 * hostile spellings, file reads and edits, fetches, MCP tools) against a certificate of the usual
 * size. The baseline is canonicalize() of the same calls, the work the recorder does on every event
 * anyway, so the ratio says how many recordings one policy decision costs.
 */
import { canonicalize } from '../src/core/canonical.js';
import { type ActionCall, type ActionPolicy, evaluateAction } from '../src/evidence/policy/patterns.js';
import { type BenchModule, type BenchResult, rate } from './harness.js';

const POLICY: ActionPolicy = {
  allow: [
    'Bash(git status*)',
    'Bash(git diff*)',
    'Bash(git log*)',
    'Bash(npm test*)',
    'Bash(npm run *)',
    'Bash(ls*)',
    'Bash(cat *)',
    'Bash(grep *)',
    'Read',
    'Edit(src/**)',
    'Edit(test/**)',
    'Write(src/**)',
    'WebFetch(domain:docs.example.com)',
    'mcp__github__*',
  ],
  forbid: [
    'Bash(rm -rf *)',
    'Bash(git push --force*)',
    'Bash(curl * | sh)',
    'Read(.env)',
    'Write(.env)',
    'Edit(.github/**)',
    'WebFetch(domain:evil.example)',
  ],
  escalate: ['Bash(git push*)', 'Bash(npm publish*)'],
};

const bash = (command: string): ActionCall => ({ tool: 'Bash', input: { command }, cwd: '/p' });
const CALLS: ActionCall[] = [
  bash('git status'),
  bash('git diff --stat HEAD~1'),
  bash('npm test 2>&1 | tail -n 40'),
  bash('ls -la src'),
  bash('cat package.json'),
  bash('grep -rn "evaluateAction" src test'),
  bash('cd src && git log --oneline -n 5'),
  bash('npm run build && node dist/bin/tally.js --help'),
  bash('git push origin main'),
  bash('rm -fr /tmp/build'),
  bash("bash -c 'git -C . push --force origin main'"),
  bash('for f in src/*.ts; do wc -l "$f"; done > /tmp/lines.txt'),
  { tool: 'Read', input: { file_path: '/p/src/index.ts' }, cwd: '/p' },
  { tool: 'Read', input: { file_path: '/p/.env' }, cwd: '/p' },
  { tool: 'Edit', input: { file_path: '/p/src/a.ts', old_string: 'a', new_string: 'b' }, cwd: '/p' },
  { tool: 'Write', input: { file_path: '/p/src/new.ts', content: 'export {};\n' }, cwd: '/p' },
  { tool: 'WebFetch', input: { url: 'https://docs.example.com/guide', prompt: 'summarise' } },
  { tool: 'mcp__github__create_issue', input: { title: 'x', body: 'y' } },
  { tool: 'mcp__fs__read_file', input: { path: '/p/README.md' }, cwd: '/p' },
  { tool: 'Grep', input: { pattern: 'TODO', path: 'src' }, cwd: '/p' },
];

const bench: BenchModule = {
  title: 'policy: evaluateAction per call',
  async run(): Promise<BenchResult[]> {
    let i = 0;
    const next = (): ActionCall => CALLS[i++ % CALLS.length] as ActionCall;
    // Warm both paths so neither pays for JIT compilation in its timed run.
    for (let k = 0; k < 2000; k++) {
      evaluateAction(POLICY, next());
      canonicalize(next());
    }
    let policyRate = 0;
    let baseRate = 0;
    for (let round = 0; round < 3; round++) {
      policyRate = Math.max(
        policyRate,
        rate(() => evaluateAction(POLICY, next()), 700),
      );
      baseRate = Math.max(
        baseRate,
        rate(() => canonicalize(next()), 700),
      );
    }
    return [
      {
        name: 'evaluateAction, realistic mix',
        measured: `${(1e6 / policyRate).toFixed(2)} µs/call`,
        baseline: `canonicalize of the call ${(1e6 / baseRate).toFixed(2)} µs`,
        ratio: baseRate / policyRate,
        target: 'report (recordings per decision)',
      },
    ];
  },
};

export default bench;
