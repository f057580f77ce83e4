/**
 * `tally ahp validate` as a real process: exit 0 for the official valid fixtures, 1 for the
 * official invalid ones (every issue listed), 2 for unreadable files and text that is not JSON,
 * and the `--json` report shape.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../temp.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = fileURLToPath(
  new URL('../../../../shared/ahp/fixtures/draft/registration/', import.meta.url),
);
const dir = tempDir('tally-ahp-validate-');
after(() => rmSync(dir, { recursive: true, force: true }));

function tally(...args: string[]) {
  const r = spawnSync(process.execPath, ['bin/tally.js', 'ahp', 'validate', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Report {
  valid: boolean;
  issues: { pointer: string; rule: string; message: string }[];
  warnings: { pointer: string; rule: string; message: string }[];
}

function assertReportShape(report: Report): void {
  assert.deepEqual(Object.keys(report).sort(), ['issues', 'valid', 'warnings']);
  assert.equal(typeof report.valid, 'boolean');
  for (const issue of [...report.issues, ...report.warnings]) {
    assert.deepEqual(Object.keys(issue).sort(), ['message', 'pointer', 'rule']);
    assert.ok(issue.pointer === '' || issue.pointer.startsWith('/'));
    assert.ok(issue.rule.length > 0 && issue.message.length > 0);
  }
}

test('a valid registration exits 0, human text on stderr', () => {
  const r = tally(join(FIXTURES, 'portable.valid.json'));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /valid \(2 backends, 3 subscriptions\)/);
});

test('a valid registration with warnings exits 0 and prints them', () => {
  const r = tally(join(FIXTURES, 'model-family-selection.valid.json'), '--json');
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as Report;
  assertReportShape(report);
  assert.equal(report.valid, true);
  assert.deepEqual(report.issues, []);
  // model.* covers observe-only model.error and model.switch.after (catalogue in the spec digest §5.2).
  assert.deepEqual(
    report.warnings.map((w) => [w.pointer, w.rule]),
    [['/hooks/0/subscriptions/0/events/0', 'subscription.events.partly-interceptable']],
  );
  const human = tally(join(FIXTURES, 'model-family-selection.valid.json'));
  assert.equal(human.code, 0);
  assert.match(human.stderr, /warning \/hooks\/0\/subscriptions\/0\/events\/0 .*partly-interceptable/);
});

test('an invalid registration exits 1 and lists every issue with pointer and rule', () => {
  const file = join(FIXTURES, 'observe-policy-fields.invalid.json');
  const r = tally(file, '--json');
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout) as Report;
  assertReportShape(report);
  assert.equal(report.valid, false);
  // The fixture's observe subscription carries timeoutMs and failurePolicy and has no content.
  const S = '/hooks/0/subscriptions/0';
  assert.deepEqual(
    report.issues.map((i) => [i.pointer, i.rule]).sort(),
    [
      [`${S}/content`, 'subscription.content'],
      [`${S}/failurePolicy`, 'subscription.observe-policy-fields'],
      [`${S}/timeoutMs`, 'subscription.observe-policy-fields'],
    ].sort(),
  );
  const human = tally(file);
  assert.equal(human.code, 1);
  assert.equal(human.stdout, '');
  for (const i of report.issues)
    assert.ok(human.stderr.includes(i.pointer) && human.stderr.includes(`[${i.rule}]`));
});

test('every official invalid fixture exits 1', () => {
  for (const name of ['empty-hooks', 'observe-content-missing', 'content-default-missing']) {
    const r = tally(join(FIXTURES, `${name}.invalid.json`));
    assert.equal(r.code, 1, `${name}: ${r.stderr}`);
  }
});

test('a literal token is reported at its pointer', () => {
  const doc = JSON.parse(readFileSync(join(FIXTURES, 'portable.valid.json'), 'utf8'));
  doc.hooks[0].authentication = { type: 'bearer', token: 'do-not-print-me' };
  const file = join(dir, 'literal.json');
  writeFileSync(file, JSON.stringify(doc));
  const r = tally(file, '--json');
  assert.equal(r.code, 1);
  const report = JSON.parse(r.stdout) as Report;
  assert.ok(
    report.issues.some(
      (i) => i.pointer === '/hooks/0/authentication/token' && i.rule === 'authentication.literal-credential',
    ),
  );
  assert.ok(!r.stdout.includes('do-not-print-me'), 'the literal secret is never echoed');
});

test('unreadable files and non-JSON text exit 2', () => {
  const missing = tally(join(dir, 'nope.json'), '--json');
  assert.equal(missing.code, 2);
  const report = JSON.parse(missing.stdout) as Report;
  assertReportShape(report);
  assert.equal(report.valid, false);

  const broken = join(dir, 'broken.json');
  const brokenText = '{"protocolVersion": "draft", "hooks": [}';
  const offset = brokenText.indexOf('}'); // ASCII text: character index = byte offset
  writeFileSync(broken, brokenText);
  const syntax = tally(broken, '--json');
  assert.equal(syntax.code, 2);
  const syntaxReport = JSON.parse(syntax.stdout) as Report;
  assertReportShape(syntaxReport);
  assert.equal(syntaxReport.issues[0]?.rule, 'document.json');
  assert.match(syntaxReport.issues[0]?.message ?? '', new RegExp(`byte ${offset}\\b`));

  const dup = join(dir, 'dup.json');
  writeFileSync(dup, '{"protocolVersion":"draft","protocolVersion":"draft","hooks":[]}');
  assert.equal(tally(dup).code, 2);

  const human = tally(broken);
  assert.equal(human.code, 2);
  assert.match(human.stderr, new RegExp(`byte ${offset}\\b`));
});

test('usage errors exit 2', () => {
  assert.equal(tally().code, 2);
  assert.equal(tally('a.json', 'b.json').code, 2);
  assert.equal(tally('--bogus', 'a.json').code, 2);
});

test('--admit also asks whether this harness can honour the document here', () => {
  // portable.valid.json names its policy token by tokenEnv AHP_POLICY_TOKEN (the official fixture).
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync(
      process.execPath,
      ['bin/tally.js', 'ahp', 'validate', join(FIXTURES, 'portable.valid.json'), '--admit', '--json'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env,
      },
    );
  const { AHP_POLICY_TOKEN: _unset, ...without } = process.env;
  const refused = run(without);
  assert.equal(refused.status, 1, refused.stderr);
  const report = JSON.parse(refused.stdout) as Report;
  assertReportShape(report);
  assert.deepEqual(
    report.issues.map((i) => [i.pointer, i.rule]),
    [['/hooks/0/authentication/tokenEnv', 'admission.credential-missing']],
  );
  const admitted = run({ ...without, AHP_POLICY_TOKEN: 'test-only-token' });
  assert.equal(admitted.status, 0, admitted.stderr);
  assert.equal(admitted.stdout.includes('test-only-token'), false);
});
