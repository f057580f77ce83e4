/**
 * The `tally run` check the adapter tests share: in a fresh repository the real agent, under `tally
 * run`, writes a file, writes another by a shell redirection and tries a redirection into
 * protected/, which the certificate forbids. Where the shell tool takes the directory it runs in,
 * the same redirection is tried from inside protected/ through that argument (forbidden), from
 * sub/ (allowed) and with a directory Tally cannot read (refused as opaque). The disk, what the
 * model was told, the records, the receipt and the verifier must all agree on what happened.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { AgentName } from './install.js';
import { call, text } from './model/script.js';
import { makeRepo } from './repo.js';
import { runAgent } from './runner.js';
import {
  asArray,
  asRecord,
  packageRecords,
  receiptOf,
  runSummary,
  tallyProject,
  toolResults,
  underTallyRun,
  verifiedUnderCertificate,
} from './tally-flow.js';
import { makeTempDir, removeTempDir } from './temp.js';

/** What the certificate judge tells the model when a forbid matches. */
export const REASON = 'forbidden pattern';

/** An agent's own names: its write and shell tools, and the write tool's path argument. */
export interface UnderTally {
  agent: AgentName;
  write: string;
  shell: string;
  pathKey: 'file_path' | 'filePath';
  /** The shell tool's argument naming the directory it runs in, when it has one. */
  dirKey?: 'dir_path' | 'directory' | 'workdir';
}

/** The steps the model takes; `directories`: the directory-argument steps too (where the tool has one). */
export function script(dir: string, a: UnderTally, directories = false) {
  const inDirectory = (command: string, where: string) =>
    call(a.shell, { command, description: 'write in a directory', [a.dirKey as string]: where });
  return [
    call(a.write, { [a.pathKey]: join(dir, 'a.txt'), content: 'alpha\n' }),
    call(a.shell, { command: 'echo beta > b.txt', description: 'write b.txt' }),
    call(a.shell, { command: 'echo x > protected/a', description: 'write into protected' }),
    ...(a.dirKey === undefined || !directories
      ? []
      : [
          inDirectory('echo x > d.txt', join(dir, 'protected')),
          inDirectory('echo sub > d.txt', join(dir, 'sub')),
          // Each of these agents runs "" in its project directory; Tally does not guess.
          inDirectory('echo e > e.txt', ''),
        ]),
    text('Done.'),
  ];
}

/** Stops the recorder a test's Tally home started. */
export async function stopRecorder(dir: string, home: string): Promise<void> {
  const { runTally } = await import('../cli/tally-process.js');
  await runTally(['recorder', 'stop'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: home, TALLY_HOME: join(home, 'tally') },
  });
}

export async function checkTallyRun(t: TestContext, a: UnderTally): Promise<void> {
  const repo = makeRepo({
    files: { 'README.md': '# demo\n', 'protected/keep.txt': 'keep\n', 'sub/keep.txt': 'keep\n' },
  });
  const home = makeTempDir('tally-home');
  try {
    const project = await tallyProject(repo.dir, home);
    const run = await runAgent({
      agent: a.agent,
      cwd: repo.dir,
      prompt: 'Write a.txt and b.txt, then protected/a.',
      script: script(repo.dir, a, true),
      env: { TALLY_HOME: project.env.TALLY_HOME!, TALLY_RECORDER_IDLE_MS: '4000' },
      wrap: underTallyRun,
    });
    t.diagnostic(`exit ${run.exitCode} in ${run.durationMs} ms; stderr: ${run.stderr.slice(-800)}`);
    assert.equal(run.exitCode, 0, run.stderr);
    const summary = runSummary(run.stdout);
    assert.equal(summary.verified, true, JSON.stringify(summary));
    // The disk: the allowed write and shell write happened, the forbidden one did not.
    assert.equal(readFileSync(join(repo.dir, 'a.txt'), 'utf8'), 'alpha\n');
    assert.equal(readFileSync(join(repo.dir, 'b.txt'), 'utf8'), 'beta\n');
    assert.equal(existsSync(join(repo.dir, 'protected/a')), false, 'the forbidden write did not happen');
    if (a.dirKey !== undefined) {
      assert.equal(
        existsSync(join(repo.dir, 'protected/d.txt')),
        false,
        `nothing written through ${a.dirKey}`,
      );
      assert.equal(readFileSync(join(repo.dir, 'sub/d.txt'), 'utf8'), 'sub\n');
      assert.equal(existsSync(join(repo.dir, 'e.txt')), false, `an unreadable ${a.dirKey} is refused`);
    }
    // The model was told why.
    const results = toolResults(run);
    t.diagnostic(`tool results: ${results.join(' | ').slice(0, 800)}`);
    assert.ok(
      results.some((r) => r.includes(REASON)),
      results.join('\n'),
    );
    // The records: the deny was the certificate's, on the shell call.
    const records = packageRecords(String(summary.package));
    const denied = records.filter((r) => asRecord(r.decision)?.decision === 'deny');
    assert.equal(denied.length, a.dirKey === undefined ? 1 : 2, JSON.stringify(denied));
    for (const d of denied) {
      assert.equal(asRecord(d.decision)?.by, 'dev.tally.certificate');
      assert.equal(asRecord(d.decision)?.rule, 'Write(protected/**)');
    }
    if (a.dirKey !== undefined) {
      // The forbidden write through the directory: the event says where the command ran.
      const session = asRecord(asRecord(denied[1]!.event)?.session);
      assert.equal(session?.cwd, join(repo.dir, 'protected'));
      // The unreadable directory: opaque, escalated (the adapter answers a headless agent deny).
      const asked = records.filter((r) => asRecord(r.decision)?.decision === 'ask');
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.match(String(asRecord(asked[0]!.decision)?.reason), /is not a directory Tally can read/);
    }
    // The receipt: files and processes as on disk, the decision named.
    const receipt = await receiptOf(project, String(summary.package));
    const written = asArray(receipt.files_written).map((f) => String(asRecord(f)?.path));
    t.diagnostic(`files_written ${JSON.stringify(written)}; processes ${JSON.stringify(receipt.processes)}`);
    // The write tool's file is the hook's witness; b.txt was written inside a shell command,
    // which the receipt shows as that process (the agent reports no files for it).
    assert.ok(written.includes('a.txt'), JSON.stringify(written));
    assert.ok(!written.some((p) => p.startsWith('protected/')), JSON.stringify(written));
    const commands = asArray(receipt.processes).map((p) => String(asRecord(p)?.command));
    assert.ok(commands.includes('echo beta > b.txt'), JSON.stringify(commands));
    assert.ok(!commands.includes('echo x > protected/a'), JSON.stringify(commands));
    if (a.dirKey !== undefined) {
      assert.ok(commands.includes('echo sub > d.txt'), JSON.stringify(commands));
      assert.ok(!commands.includes('echo x > d.txt'), JSON.stringify(commands));
    }
    const decisions = asArray(receipt.decisions).map((d) => asRecord(d) ?? {});
    assert.ok(
      decisions.some(
        (d) => d.decision === 'deny' && d.by === 'dev.tally.certificate' && d.rule === 'Write(protected/**)',
      ),
      JSON.stringify(decisions),
    );
    await verifiedUnderCertificate(project, String(summary.package));
  } finally {
    await stopRecorder(repo.dir, home);
    repo.cleanup();
    removeTempDir(home);
  }
}
