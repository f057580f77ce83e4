/**
 * Programs that write files the line names only in part: compressors replace a file in place
 * (`gzip protected/x` leaves `protected/x.gz`), `split`/`csplit` write PREFIX + a suffix, `wget -P
 * DIR` and `curl --output-dir DIR` save under DIR, `git clone REPO [DIR]` makes DIR (or the
 * repository's name), `mktemp` a new file under `-p DIR` or its template's folder. Oracle: the real
 * programs (a local git repository and an HTTP server on 127.0.0.1 to fetch from) change
 * `protected/` for each line, which the judge must then not allow; the harmless forms leave it as it
 * was and stay allowed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';
import { have, type LineOutcome, PROTECTED, protectedState, verdictTable } from './protected.js';

const POLICY = PROTECTED;
const tools = [
  'bash',
  'gzip',
  'xz',
  'bzip2',
  'zstd',
  'split',
  'csplit',
  'wget',
  'curl',
  'git',
  'mktemp',
].every(have);

function run(line: string): Promise<LineOutcome> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tally-in-place-')));
  const w = join(root, 'w');
  mkdirSync(join(w, 'protected'), { recursive: true });
  mkdirSync(join(w, 'sub'));
  writeFileSync(join(w, 'protected', 'x'), 'one\ntwo\nthree\n');
  writeFileSync(join(w, 'f'), 'one\ntwo\nthree\n');
  const src = join(root, 'src', 'protected');
  mkdirSync(src, { recursive: true });
  const env = {
    ...process.env,
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    NO_PROXY: '127.0.0.1',
    no_proxy: '127.0.0.1',
  };
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
      cwd: src,
      env,
      stdio: 'ignore',
    });
  git('init', '-q');
  writeFileSync(join(src, 'r'), 'r\n');
  git('add', '.');
  git('commit', '-qm', 'r');
  const command = line.replaceAll('$SRC', src).replaceAll('$URL', `http://127.0.0.1:${port}`);
  const before = protectedState(join(w, 'protected'));
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: w, env, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(timer);
      const changed = protectedState(join(w, 'protected')) !== before;
      const verdict = evaluateAction(POLICY, { tool: 'Bash', input: { command }, cwd: w });
      rmSync(root, { recursive: true, force: true });
      resolve({ changed, verdict });
    });
  });
}

let server: Server;
let port = 0;

describe('programs that write beside or under what the line names', {
  skip: !tools && 'a program is missing',
}, () => {
  before(async () => {
    server = createServer((_req, res) => res.end('fetched\n'));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  verdictTable(run, {
    changes: [
      'gzip protected/x',
      'gzip -k protected/x',
      'gzip -r .',
      'xz -k protected/x',
      'bzip2 protected/x',
      'zstd -q --rm protected/x',
      'split -l 1 f protected/piece_',
      'csplit -s -f protected/part f 2',
      'wget -q -P protected $URL/x',
      'curl -s --output-dir protected -O $URL/x',
      'git clone -q $SRC protected/copy',
      'cd protected && git clone -q $SRC',
      'mktemp -p protected',
      'mktemp protected/tmp.XXXXXX',
    ],
    harmless: [
      'gzip -c protected/x > x.gz',
      'gzip -k f && gzip -t f.gz',
      'gzip -r sub',
      'split -l 1 f',
      'csplit -s f 2',
      'mktemp -p sub',
      'curl -s -O $URL/x',
      'wget -q $URL/x',
      'git clone -q $SRC sub/copy',
    ],
  });
});
