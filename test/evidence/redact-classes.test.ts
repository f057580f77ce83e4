/**
 * One table per class of redaction miss, in the shape of Treeship's vectors: each leak names what
 * must not survive and what evidence must; each class has benign lines that stay byte for byte.
 * Oracles: each tool's manual for where its password goes (docker login(1) `-p, --password`,
 * az login `-p, --password`, sshpass(1) `-p password`, mysql(1) `-p[password]` attached only,
 * redis-cli `-a`), RFC 8259 string escaping for JSON inside a string, and the error formats of
 * clap (`invalid value 'V' for '--flag <FLAG>'`) and argparse (`argument --flag: invalid choice: 'V'`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REDACTED, redactErrorMessage, redactText, redactValue } from '../../src/evidence/redact.js';

interface Leak {
  input: string;
  secret: string;
  kept: string[];
}

function table(name: string, leaks: Leak[], benign: string[]): void {
  describe(name, () => {
    for (const leak of leaks) {
      test(`leak: ${JSON.stringify(leak.input)}`, () => {
        const out = redactText(leak.input);
        assert.ok(!out.includes(leak.secret), `${out} still has ${leak.secret}`);
        for (const kept of leak.kept) assert.ok(out.includes(kept), `${out} lost ${kept}`);
        assert.ok(out.includes(REDACTED));
        assert.equal(redactText(out), out, 'idempotent');
      });
    }
    for (const input of benign) {
      test(`benign: ${JSON.stringify(input)}`, () => assert.equal(redactText(input), input));
    }
  });
}

table(
  'passwords as short flags of particular commands',
  [
    {
      input: 'docker login -p hunter2 -u bob registry.example',
      secret: 'hunter2',
      kept: ['docker login -p', '-u bob', 'registry.example'],
    },
    { input: 'docker login registry.example -u bob -p "s3 cr3t"', secret: 's3 cr3t', kept: ['-u bob'] },
    { input: 'podman login -u bob -p pw123 quay.io', secret: 'pw123', kept: ['quay.io'] },
    { input: 'helm registry login r.example -u bob -p pw123', secret: 'pw123', kept: ['-u bob'] },
    { input: 'sshpass -p hunter2 ssh bob@host', secret: 'hunter2', kept: ['sshpass -p', 'ssh bob@host'] },
    { input: 'sshpass -phunter2 ssh host', secret: 'hunter2', kept: ['ssh host'] },
    { input: 'az login -u bob@example.com -p hunter2', secret: 'hunter2', kept: ['-u bob@example.com'] },
    { input: 'mysql -u root -phunter2 shop', secret: 'hunter2', kept: ['-u root', 'shop'] },
    { input: 'redis-cli -h cache -a hunter2 ping', secret: 'hunter2', kept: ['-h cache', 'ping'] },
    { input: 'cd x && sudo docker login -u bob -p hunter2', secret: 'hunter2', kept: ['cd x &&'] },
  ],
  [
    'docker run -p 8080:80 nginx',
    'docker ps -a',
    'mysql -u root -p shop',
    'az vm list -p x',
    'ssh -p 2222 host',
    'docker login -u bob --password-stdin < pw.txt',
    'sshpass -p "$PASS" ssh host',
    'helm install -p chart',
  ],
);

table(
  'names whose last word says which copy of a secret they hold',
  [
    {
      input: 'SECRET_KEY_BASE=abc123def rails s',
      secret: 'abc123def',
      kept: ['SECRET_KEY_BASE=', 'rails s'],
    },
    { input: 'export DB_PASSWORD_PROD=hunter2', secret: 'hunter2', kept: ['export DB_PASSWORD_PROD='] },
    { input: 'API_KEY_V2=k123 ./run', secret: 'k123', kept: ['./run'] },
    { input: 'STRIPE_SECRET_LIVE=abc ./run', secret: 'abc', kept: ['./run'] },
    { input: 'deploy --token-prod=xyz789', secret: 'xyz789', kept: ['deploy --token-prod='] },
  ],
  [
    'TOKEN_COUNT=5 ./run',
    'SESSION_ID_BASE=abc ./run',
    'KEY_BASE_URL=https://x.example ./run',
    'PRIMARY_KEY_ID=7 ./run',
  ],
);

table(
  'JSON inside a string and object reprs',
  [
    {
      input: 'curl -d "{\\"password\\":\\"hunter2\\",\\"user\\":\\"bob\\"}" https://x.example',
      secret: 'hunter2',
      kept: ['\\"user\\":\\"bob\\"', 'https://x.example'],
    },
    {
      input: '{"command":"echo {\\\\\\"token\\\\\\": \\\\\\"abc123\\\\\\"}"}',
      secret: 'abc123',
      kept: ['echo'],
    },
    {
      input: "TypeError: bad request {'api_key': 'k-123456', 'user': 'bob'}",
      secret: 'k-123456',
      kept: ["'user': 'bob'"],
    },
    { input: "{ password: 'hunter2', user: 'bob' }", secret: 'hunter2', kept: ["user: 'bob'"] },
  ],
  [
    'curl -d "{\\"user\\":\\"bob\\"}" https://x.example',
    "{'name': 'x', 'count': 3}",
    'echo "{\\"token_count\\": \\"5\\"}"',
  ],
);

table(
  'values echoed in error messages',
  [
    {
      input: "error: invalid value 'hunter2' for '--password <PASSWORD>'",
      secret: 'hunter2',
      kept: ["for '--password <PASSWORD>'"],
    },
    {
      input: "error: argument --token: invalid choice: 'ghx_abc123'",
      secret: 'ghx_abc123',
      kept: ['argument --token'],
    },
    { input: "Error: invalid token 'abc123def'", secret: 'abc123def', kept: ['invalid token'] },
    { input: 'auth failed: wrong password "hunter2" for bob', secret: 'hunter2', kept: ['for bob'] },
    { input: 'fatal: bad api key: "k-999999"', secret: 'k-999999', kept: ['bad api key'] },
    {
      input: "--api-key must be 32 characters, got 'short1'",
      secret: 'short1',
      kept: ['--api-key', '32 characters'],
    },
    { input: 'config error: password: "hunter2" is too short', secret: 'hunter2', kept: ['is too short'] },
  ],
  [
    "error: invalid value 'x' for '--count <COUNT>'",
    "Error: invalid path 'src/a.ts'",
    "error: argument --mode: invalid choice: 'fast'",
    "--valid-days must be a positive number, got 'abc'",
    'git commit -m "rotate token"',
    "grep -r 'token' src",
  ],
);

table(
  'substitutions are references, not secrets',
  [{ input: 'TOKEN=abc123 ./run', secret: 'abc123', kept: ['./run'] }],
  [
    'TOKEN=$(cat tok) ./run',
    'TOKEN="$(cat tok)" ./run',
    'GITHUB_TOKEN=$' + '{GH_TOKEN} gh pr list',
    'export API_KEY="$API_KEY_FROM_VAULT"',
    'curl --token "$TOKEN" https://x.example',
    'mytool --password `cat pw` run',
  ],
);

test('redactValue: escaped JSON in a command field and a secret in an error field', () => {
  const out = redactValue({
    tool: { name: 'Bash', input: { command: 'curl -d "{\\"password\\":\\"hunter2\\"}" x' } },
    error: "invalid value 'hunter2' for '--password <P>'",
  });
  assert.ok(!JSON.stringify(out).includes('hunter2'), JSON.stringify(out));
});

test('redactErrorMessage: the message and its causes, redacted', () => {
  const error = new Error('login failed', { cause: new Error('docker login -p hunter2 r.example') });
  const text = redactErrorMessage(error);
  assert.equal(text, `login failed: docker login -p ${REDACTED} r.example`);
  assert.equal(redactErrorMessage('plain --token abc'), `plain --token ${REDACTED}`);
});
