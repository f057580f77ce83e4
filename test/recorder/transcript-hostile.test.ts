/**
 * The agent writes its own transcript, so the close reads it as hostile input. Oracles that are not
 * the code under test: the token's own bytes (never in the package), the kernel's answer for a
 * folder that is a file, and the record line limit the readers enforce (docs/formats.md). Before the
 * fix a transcript-only use was recorded unredacted, and a use nested past the stack, one whose input
 * is larger than a record line, or a `subagents` that is a file left the session open for good:
 * every close threw.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodedPayloads, jsonOut, type Project, runTally } from '../cli/tally-process.js';
import { certified, recorderProjects } from './projects.js';

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const use = (id: string, name: string, input: unknown) =>
  line({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name, input }] } });
const result = (id: string) =>
  line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] } });

const projects = recorderProjects();
const project = () => projects('tally-transcript-', certified('--allow', 'Bash(ls*)'));

function hook(p: Project, payload: Record<string, unknown>, args: string[] = []) {
  return runTally(['hook', 'claude-code', ...args], {
    cwd: p.root,
    env: p.env,
    stdin: JSON.stringify(payload),
  });
}

/** Starts a harness session naming `transcript`, ends it, and returns the sealed package's records. */
// biome-ignore lint/suspicious/noExplicitAny: decoded records, read by the assertions that follow
async function sealed(p: Project, transcript: string): Promise<{ pkg: string; records: any[] }> {
  const fields = { session_id: 'harness-t', transcript_path: transcript, cwd: p.root };
  const start = await hook(p, { ...fields, hook_event_name: 'SessionStart', source: 'startup' }, [
    '--agent',
    'coder',
  ]);
  assert.equal(start.code, 0, start.stderr);
  const { sessions } = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
    sessions: { session: string }[];
  };
  const ended = await hook(p, { ...fields, hook_event_name: 'SessionEnd', reason: 'other' });
  assert.equal(ended.code, 0, ended.stderr);
  const st = jsonOut(await p.tally(['session', 'status', '--session', sessions[0]!.session, '--json']));
  assert.equal(typeof st.package, 'string', 'the session was sealed');
  const pkg = String(st.package);
  const records = readFileSync(pkg, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from(JSON.parse(l).payload, 'base64').toString()));
  return { pkg, records };
}

describe('the close reads the transcript as hostile input', () => {
  it('a call only the transcript shows is recorded redacted', async () => {
    const p = await project();
    const token = `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`;
    const transcript = join(p.dir, 't.jsonl');
    writeFileSync(
      transcript,
      use('toolu_s', 'Bash', { command: `GITHUB_TOKEN=${token} gh repo list` }) + result('toolu_s'),
    );
    const { pkg, records } = await sealed(p, transcript);
    const seen = records.find((r) => r.source === 'transcript' && r.event.type === 'tool.after');
    assert.match(seen.event.tool.input.command, /^GITHUB_TOKEN=\[REDACTED\] gh repo list$/);
    assert.ok(!decodedPayloads(readFileSync(pkg)).includes(token), 'the token is nowhere in the package');
  });

  it('a use nested too deeply, one too large and a subagents file: the session seals, each said', async () => {
    const p = await project();
    const transcript = join(p.dir, 't.jsonl');
    const depth = 200_000;
    const deep = `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_deep","name":"Bash","input":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}]}}\n`;
    // Larger than a record line may be (64 MiB).
    const large = use('toolu_large', 'Write', { file_path: 'a.txt', content: 'x'.repeat(65 * 1024 * 1024) });
    writeFileSync(transcript, deep + result('toolu_deep') + large + result('toolu_large'));
    mkdirSync(join(p.dir, 't'));
    writeFileSync(join(p.dir, 't', 'subagents'), 'not a folder');
    const { pkg, records } = await sealed(p, transcript);
    assert.equal((await p.tally(['verify', pkg])).code, 0, 'the package is whole');
    const byCall = new Map(
      records.filter((r) => r.source === 'transcript' && r.event.call).map((r) => [r.event.call.id, r.event]),
    );
    for (const call of ['toolu_deep', 'toolu_large']) {
      const event = byCall.get(call);
      assert.deepEqual(event?.tool.input, {}, call);
      assert.equal(typeof event?.extensions['dev.tally.transcript'].input_omitted, 'string', call);
    }
    assert.match(
      byCall.get('toolu_large').extensions['dev.tally.transcript'].input_omitted,
      /^the input is \d+ bytes/,
    );
    const summary = records.find((r) => r.event.type === 'tally.transcript.summary');
    const [only] = summary.event.extensions['dev.tally.transcript'].transcripts;
    assert.equal(only.seen_only_in_transcript, 2);
    assert.deepEqual(only.unread, [
      {
        file: join(p.dir, 't', 'subagents'),
        reason: `${join(p.dir, 't', 'subagents')} is not a folder: the subagents' transcripts are not read`,
      },
    ]);
  });
});
