/**
 * The redactor. Oracles: Treeship's shared redaction vectors (every leak removed with its evidence
 * kept, every benign line unchanged byte for byte), Treeship's hook expectations (the exact redacted
 * command), and the documented rules in docs/redaction.md for the secret shapes named there.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { isSecretName, REDACTED, redactText, redactValue } from '../../src/evidence/redact.js';

const VECTORS = '../shared/reference/treeship-vectors';

interface Leak {
  name: string;
  input: string;
  must_not_contain: string[];
  preserved: string[];
}
interface Benign {
  name: string;
  input: string;
}

const vectors = JSON.parse(readFileSync(`${VECTORS}/vectors/redaction.json`, 'utf8')) as {
  leaks: Leak[];
  benign: Benign[];
};

describe('redaction vectors (treeship-vectors/vectors/redaction.json)', () => {
  test('the vector file has both kinds of cases', () => {
    assert.ok(vectors.leaks.length >= 10);
    assert.ok(vectors.benign.length >= 5);
  });
  for (const leak of vectors.leaks) {
    test(`leak: ${leak.name}`, () => {
      const out = redactText(leak.input);
      for (const secret of leak.must_not_contain)
        assert.ok(!out.includes(secret), `${out} still has ${secret}`);
      for (const kept of leak.preserved) assert.ok(out.includes(kept), `${out} lost ${kept}`);
      assert.ok(out.includes(REDACTED));
    });
  }
  for (const benign of vectors.benign) {
    test(`benign: ${benign.name}`, () => assert.equal(redactText(benign.input), benign.input));
  }
});

describe('hook expectations (treeship-vectors/integration-hook-fixtures)', () => {
  for (const plugin of ['claude-code-plugin', 'kimi-code-plugin']) {
    test(`${plugin}: the recorded command is redacted exactly as expected`, () => {
      const base = `${VECTORS}/integration-hook-fixtures`;
      const fixture = JSON.parse(
        readFileSync(`${base}/fixtures/${plugin}/post-tool-use-Bash-secret.json`, 'utf8'),
      );
      const input = (fixture.tool_input ?? fixture.params) as { command: string };
      const expected = readFileSync(`${base}/expectations/${plugin}/post-tool-use-Bash-secret.txt`, 'utf8');
      const recorded = /--tool (.*) --exit-code/.exec(expected)?.[1];
      assert.ok(recorded !== undefined);
      assert.equal(redactText(input.command), recorded);
    });
  }
});

/** [input, secret that must go, text that must stay] — per the rules in docs/redaction.md. */
const CASES: [string, string, string][] = [
  [
    'curl -H "Authorization: Bearer abc.def-123" https://x',
    'abc.def-123',
    'Authorization: Bearer [REDACTED]"',
  ],
  [
    'curl -H "Authorization: Basic YWxhZGRpbjpvcGVu" x',
    'YWxhZGRpbjpvcGVu',
    'Authorization: Basic [REDACTED]',
  ],
  ['authorization:token 0123456789abcdef', '0123456789abcdef', 'authorization:token [REDACTED]'],
  ['X-Api-Key: k-123456\nnext line', 'k-123456', 'X-Api-Key: [REDACTED]\nnext line'],
  ['Cookie: sid=abc; theme=dark', 'sid=abc', 'Cookie: [REDACTED]'],
  ['got Bearer eyzzzzzzzzzzzzzz back', 'eyzzzzzzzzzzzzzz', 'got Bearer [REDACTED] back'],
  ['psql postgres://app:pa55word@db:5432/x', 'pa55word', 'postgres://app:[REDACTED]@db:5432/x'],
  ['https://h/x?api_key=K1&id=7&token=T2#f', 'K1', 'id=7'],
  ['https://h/x?api_key=K1&id=7&token=T2', 'T2', '?api_key=[REDACTED]&id=7&token=[REDACTED]'],
  ['GITHUB_TOKEN=abc123 gh pr list', 'abc123', 'GITHUB_TOKEN=[REDACTED] gh pr list'],
  ['export OPENAI_API_KEY="quoted value"', 'quoted value', 'export OPENAI_API_KEY=[REDACTED]'],
  ['DB_PASSWORD=x1 MYSQL_PWD=x2 run', 'x2', 'DB_PASSWORD=[REDACTED] MYSQL_PWD=[REDACTED] run'],
  ['tool --token=abc --password "p w" --client-secret s3', 'p w', '--token=[REDACTED] --password [REDACTED]'],
  ['tool --client-secret s3 go', 's3', '--client-secret [REDACTED] go'],
  ['use gho_16charsABCDEFGHIJ now', 'gho_16charsABCDEFGHIJ', 'use [REDACTED] now'],
  ['github_pat_11ABCDEFG0123456789_abcdefghij', 'github_pat_11ABCDEFG0123456789_abcdefghij', REDACTED],
  ['key ASIAABCDEFGHIJKLMNOP', 'ASIAABCDEFGHIJKLMNOP', 'key [REDACTED]'],
  ['xoxp-1234-5678-abcd', 'xoxp-1234-5678-abcd', REDACTED],
  [
    'ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstu',
    'sk-ant-api03-abcdefghijklmnopqrstu',
    'ANTHROPIC=[REDACTED]',
  ],
  ['sk-proj-ABCDEFGHIJKLMNOPQRST ok', 'sk-proj-ABCDEFGHIJKLMNOPQRST', '[REDACTED] ok'],
  ['rk_test_abcdef123456', 'rk_test_abcdef123456', REDACTED],
  ['AIzaSyA1234567890abcdefghijklmnopqrstuv', 'AIzaSyA1234567890abcdefghijklmnopqrstuv', REDACTED],
  [
    'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl!',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl',
    'jwt [REDACTED]!',
  ],
  [
    'a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----\nz',
    'b3BlbnNzaA==',
    'a\n[REDACTED]\nz',
  ],
  ['{"user":"bob","password":"hun\\"ter"}', 'hun', '{"user":"bob","password":"[REDACTED]"}'],
  [
    'aws configure set aws_secret_access_key wJalrXUtnFEMI',
    'wJalrXUtnFEMI',
    'aws_secret_access_key [REDACTED]',
  ],
];

describe('redactText rules', () => {
  for (const [input, secret, kept] of CASES) {
    test(JSON.stringify(input), () => {
      const out = redactText(input);
      assert.ok(!out.includes(secret), `${out} still has ${secret}`);
      assert.ok(out.includes(kept), `${out} lacks ${kept}`);
      assert.equal(redactText(out), out, 'idempotent');
    });
  }

  const UNCHANGED = [
    'sudo -u root ls /root',
    'docker login --password-stdin registry.example.com',
    'gh auth login --with-token < token.txt',
    'tool --token-file ./t.txt',
    'GIT_AUTHOR_NAME=alice PWD=/home/a make',
    'llm --max-tokens 300 token_count=5',
    'git log --author=alice --format=%H',
    'ssh -i ~/.ssh/id_ed25519 git@github.com',
    'see https://example.com/a?page=2&sort=asc',
    'disk-usage sk-short',
    'curl -u alice https://example.com',
    '{"session_id":"abc","tool_use_id":"t1"}',
  ];
  for (const input of UNCHANGED) {
    test(`unchanged: ${input}`, () => assert.equal(redactText(input), input));
  }
});

describe('isSecretName', () => {
  test('credential names by their last word', () => {
    for (const name of [
      'GITHUB_TOKEN',
      'api_key',
      'apiKey',
      'x-api-key',
      'clientSecret',
      'AWS_SECRET_ACCESS_KEY',
      'password',
      'DB_PASS',
      'Authorization',
      'signature',
      'sig',
      'with-token',
      'COOKIE',
    ]) {
      assert.ok(isSecretName(name), name);
    }
  });
  test('look-alikes that are not credentials', () => {
    for (const name of [
      'token_count',
      'max_tokens',
      'tokensIn',
      'session_id',
      'PWD',
      'OLDPWD',
      'author',
      'GIT_AUTHOR_NAME',
      'auth-type',
      'primary_key_id',
      'no-password',
      'keyboard',
      'expires',
    ]) {
      assert.ok(!isSecretName(name), name);
    }
  });
});

describe('redactValue', () => {
  test('redacts deeply, keeps evidence, never mutates', () => {
    const input = {
      session_id: 's-1',
      tool_input: { command: 'GITHUB_TOKEN=abc gh api', env: { NPM_TOKEN: 'n-1', HOME: '/h' } },
      headers: { Authorization: 'Bearer zzz', Accept: 'application/json' },
      password: 12345,
      apiKeys: ['k1', { note: 'ghp_abcdefghij0123456789' }],
      has_token: true,
      secret: null,
      usage: { input_tokens: 10, max_tokens: 20 },
    };
    const before = JSON.stringify(input);
    const out = redactValue(input);
    assert.equal(JSON.stringify(input), before);
    assert.deepEqual(out, {
      session_id: 's-1',
      tool_input: { command: 'GITHUB_TOKEN=[REDACTED] gh api', env: { NPM_TOKEN: REDACTED, HOME: '/h' } },
      headers: { Authorization: `Bearer ${REDACTED}`, Accept: 'application/json' },
      password: REDACTED,
      apiKeys: ['k1', { note: REDACTED }],
      has_token: true,
      secret: null,
      usage: { input_tokens: 10, max_tokens: 20 },
    });
  });
  test('returns new containers and keeps a __proto__ key as data', () => {
    const input = JSON.parse('{"__proto__":{"token":"t"},"a":[1]}') as Record<string, unknown>;
    const out = redactValue(input) as Record<string, unknown>;
    assert.notEqual(out, input);
    assert.notEqual(out.a, input.a);
    assert.deepEqual(Object.keys(out), ['__proto__', 'a']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { token: REDACTED });
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
  });
});

describe('hostile input', () => {
  const MB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length));
  const shapes = [
    'eyJa-',
    'a=',
    '"k": "',
    '"token": "\\"',
    '-----BEGIN AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA ',
    '--token ',
    '-u a:',
    'https://a:b',
    'Authorization: ',
    'Bearer ',
    'ghp_',
    ' ',
    'x',
    'docker login -p ',
    'sshpass -p',
    'mysql -p',
    '\\"password\\":\\"',
    '\\',
    "'token': '",
    'invalid token ',
    "' for '--token ",
    '--token got ',
    'password: "',
  ];
  for (const unit of shapes) {
    test(`1 MB of ${JSON.stringify(unit)} completes and still redacts a trailing secret`, () => {
      const out = redactText(`${fill(unit)} GITHUB_TOKEN=tail-secret-42`);
      assert.equal(typeof out, 'string');
      assert.ok(!out.includes('tail-secret-42'));
    });
  }
});
