/**
 * The agent's control plane: a write to the files that wire an agent's hooks (its settings, its
 * plugins, its MCP configuration, Tally's state) is escalated unless the certificate says
 * otherwise (`control_plane`). Oracle: where each pinned agent reads its hooks from
 * (docs/agents.md) and what the shell does with each command (bash resolves `..`, expands `~` to
 * the home, and `>` writes its target), against the rule of docs/policy.md "The control plane".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPair } from '../../../src/core/keys.js';
import { CertificateError, issueCertificate, parseCertificate } from '../../../src/evidence/certificate.js';
import { type ActionCall, type ActionPolicy, evaluateAction } from '../../../src/evidence/policy/patterns.js';

const PROJECT = '/work/project';
const HOME = '/home/dev';
const TALLY = '/opt/tally-home';
const POLICY: ActionPolicy = { allow: ['Bash', 'Write', 'Edit', 'Delete', 'Read'], forbid: [], escalate: [] };

const at = (tool: string, input: Record<string, unknown>): ActionCall => ({
  tool,
  input,
  cwd: PROJECT,
  base: PROJECT,
  home: HOME,
  tallyHome: TALLY,
});
const write = (path: string) => at('Write', { file_path: path, content: '{}' });
const shell = (command: string) => at('Bash', { command });
const verdictOf = (call: ActionCall, policy: ActionPolicy = POLICY) => evaluateAction(policy, call);

describe('a write to the control plane is escalated by default', () => {
  it('every project file that wires an agent, and every file of the folders that do', () => {
    for (const path of [
      '.claude/settings.json',
      '.claude/settings.local.json',
      '.gemini/settings.json',
      '.qwen/settings.json',
      '.codex/config.toml',
      '.codex/hooks.json',
      '.opencode/plugins/tally.ts',
      '.opencode/opencode.json',
      'opencode.json',
      'opencode.jsonc',
      '.cursor/hooks.json',
      '.cursor/mcp.json',
      '.mcp.json',
      '.tally/hooks.json',
      '.tally/agents/coder.agent.json',
    ]) {
      const v = verdictOf(write(path));
      assert.equal(v.verdict, 'escalate', path);
      assert.match(String(v.reason), /control plane/, path);
      assert.match(String(v.reason), /control_plane is ask/, path);
    }
    assert.match(String(verdictOf(write('.codex/config.toml')).reason), /\(\.codex\/config\.toml\)/);
  });

  it('the folders of the user’s home and the Tally home, whole', () => {
    for (const [path, place] of [
      [`${HOME}/.claude/settings.json`, '~/.claude/'],
      [`${HOME}/.gemini/extensions/x/hooks/hooks.json`, '~/.gemini/'],
      [`${HOME}/.qwen/settings.json`, '~/.qwen/'],
      [`${HOME}/.codex/config.toml`, '~/.codex/'],
      [`${HOME}/.config/opencode/plugin/p.ts`, '~/.config/opencode/'],
      [`${HOME}/.cursor/hooks.json`, '~/.cursor/'],
      [`${TALLY}/trust/approvers/k.pub.json`, 'TALLY_HOME'],
    ] as const) {
      const v = verdictOf(write(path));
      assert.equal(v.verdict, 'escalate', path);
      assert.ok(String(v.reason).includes(`(${place})`), `${path}: ${v.reason}`);
    }
  });

  it('after normalisation: dot segments, doubled slashes, absolute spellings, case', () => {
    for (const path of [
      './.claude/../.claude/settings.json',
      '.claude//settings.json',
      'src/../.mcp.json',
      `${PROJECT}/.codex/./hooks.json`,
      `${PROJECT}/src/../.gemini/settings.json`,
      '.CLAUDE/Settings.json',
    ])
      assert.equal(verdictOf(write(path)).verdict, 'escalate', path);
  });

  it('not a neighbour: .claudeX/, other files of .claude/, a project elsewhere, reads', () => {
    for (const path of [
      '.claudeX/settings.json',
      '.claude/settings.jsonx',
      '.claude/commands/review.md',
      'docs/.mcp.json.md',
      'sub/.claude/settings.json',
      '/elsewhere/.claude/settings.json',
      `${HOME}/.claudeX/settings.json`,
      `${HOME}/notes.txt`,
    ])
      assert.equal(verdictOf(write(path)).verdict, 'allowed', path);
    assert.equal(verdictOf(at('Read', { file_path: '.claude/settings.json' })).verdict, 'allowed');
    assert.equal(verdictOf(shell('cat .claude/settings.json ~/.codex/config.toml')).verdict, 'allowed');
  });

  it('edits, deletes, and every way a shell command writes one', () => {
    assert.equal(verdictOf(at('Edit', { file_path: '.claude/settings.json' })).verdict, 'escalate');
    assert.equal(verdictOf(at('Delete', { path: '.mcp.json' })).verdict, 'escalate');
    for (const command of [
      'echo x > .codex/config.toml',
      'echo x >> .claude/settings.local.json',
      'cp /tmp/s.json .gemini/settings.json',
      'mv .mcp.json /tmp/old',
      'mv /tmp/new.json opencode.json',
      'sed -i s/tally/true/ .qwen/settings.json',
      'echo {} | tee .cursor/hooks.json',
      'rm -f .codex/hooks.json',
      'rm -rf .claude',
      'rm -rf .opencode',
      'cd .claude && echo x > settings.json',
      'echo x > ~/.claude/settings.json',
      `ln -sf /tmp/evil.ts ${HOME}/.config/opencode/plugin/tally.ts`,
      'echo x > .c*/settings.json',
    ]) {
      const v = verdictOf(shell(command));
      assert.equal(v.verdict, 'escalate', command);
      assert.match(String(v.reason), /control plane/, command);
    }
  });

  it('a written path known only at run time may be the control plane', () => {
    const v = verdictOf(shell('echo x > "$TARGET"'));
    assert.equal(v.verdict, 'escalate');
    assert.match(String(v.reason), /may write the agent.s control plane/);
  });

  it('a shell write that reaches it through a link the record resolved', () => {
    const call = {
      ...shell('echo x > docs/a'),
      resolved: [{ path: `${PROJECT}/docs/a`, resolved: `${PROJECT}/.mcp.json` }],
    };
    assert.equal(verdictOf(call).verdict, 'escalate');
    assert.equal(verdictOf(shell('echo x > docs/a')).verdict, 'allowed');
  });
});

describe('the certificate decides: control_plane ask | deny | allow', () => {
  it('allow judges it as any other write', () => {
    const open = { ...POLICY, controlPlane: 'allow' as const };
    assert.equal(verdictOf(write('.claude/settings.json'), open).verdict, 'allowed');
    assert.equal(verdictOf(shell('echo x > .codex/config.toml'), open).verdict, 'allowed');
    // The certificate's own patterns still apply.
    const guarded = { ...open, forbid: ['Write(.claude/**)'] };
    assert.equal(verdictOf(write('.claude/settings.json'), guarded).verdict, 'forbidden');
  });

  it('deny forbids it, naming the place; a forbid pattern that matches is named first', () => {
    const closed = { ...POLICY, controlPlane: 'deny' as const };
    const v = verdictOf(write('.claude/settings.json'), closed);
    assert.deepEqual(v, {
      verdict: 'forbidden',
      reason:
        "writes the agent's control plane (.claude/settings.json); certificate field control_plane is deny",
    });
    assert.equal(verdictOf(shell('echo x > .mcp.json'), closed).verdict, 'forbidden');
    assert.deepEqual(verdictOf(write('.mcp.json'), { ...closed, forbid: ['Write(*.json)'] }), {
      verdict: 'forbidden',
      pattern: 'Write(*.json)',
    });
  });

  it('ask never loosens a forbid pattern, and escalates what the allows alone would not cover', () => {
    assert.equal(
      verdictOf(write('.mcp.json'), { ...POLICY, forbid: ['Write(.mcp.json)'] }).verdict,
      'forbidden',
    );
    assert.equal(verdictOf(write('.mcp.json'), { ...POLICY, allow: ['Read'] }).verdict, 'escalate');
  });

  it('an opaque command may write it: escalated under every certificate', () => {
    const v = verdictOf(shell('python -c "open(1)"'));
    assert.equal(v.verdict, 'escalate');
    assert.equal(
      verdictOf(shell('python -c "open(1)"'), { ...POLICY, controlPlane: 'allow' }).verdict,
      'allowed',
    );
  });

  it('a session whose start was recorded before the rule (it names no home): judged without it', () => {
    const old = { ...write('.claude/settings.json'), beforeControlPlane: true };
    assert.equal(verdictOf(old).verdict, 'allowed');
    assert.equal(verdictOf({ ...shell('python -c "$X"'), beforeControlPlane: true }).verdict, 'allowed');
    assert.equal(verdictOf(write('.claude/settings.json')).verdict, 'escalate');
  });
});

describe('the certificate field control_plane', () => {
  const ship = generateKeyPair();
  const request = (controlPlane?: unknown) => ({
    name: 'coder',
    allow: ['Bash'],
    validFrom: new Date('2026-01-01T00:00:00Z'),
    validUntil: new Date('2026-02-01T00:00:00Z'),
    ...(controlPlane === undefined ? {} : { controlPlane: controlPlane as 'ask' }),
  });
  const isInvalid = (error: unknown) =>
    error instanceof CertificateError &&
    error.code === 'invalid' &&
    error.detail?.field === '/control_plane' &&
    /control_plane/.test(error.message);

  it('ask, deny and allow are issued and read as given; absent stays absent', () => {
    assert.equal('control_plane' in issueCertificate(request(), ship.privateKey).certificate, false);
    for (const value of ['ask', 'deny', 'allow']) {
      const { certificate } = issueCertificate(request(value), ship.privateKey);
      assert.equal(certificate.control_plane, value);
      assert.equal(parseCertificate(JSON.parse(JSON.stringify(certificate))).control_plane, value);
    }
  });

  it('any other value is refused, naming the field, issued or parsed', () => {
    assert.throws(() => issueCertificate(request('yes'), ship.privateKey), isInvalid);
    const { certificate } = issueCertificate(request('allow'), ship.privateKey);
    for (const value of ['Allow', 'off', 1, null, true])
      assert.throws(() => parseCertificate({ ...certificate, control_plane: value }), isInvalid);
  });
});
