/** `tally hub serve --json` as a real process, resolved once it prints where it listens. */
import { type ChildProcess, spawn } from 'node:child_process';
import { TALLY_BIN } from '../cli/tally-process.js';

export interface Served {
  child: ChildProcess;
  url: string;
  verifierKey: string;
  stopped: Promise<number | null>;
}

export async function serveHub(args: string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [TALLY_BIN, 'hub', 'serve', '--json', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const stopped = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    void stopped.then((code) => reject(new Error(`tally hub serve exited ${code}: ${stderr}`)));
  });
  const ready = JSON.parse(line) as { url: string; verifier_key: string };
  return { child, url: ready.url, verifierKey: ready.verifier_key, stopped };
}
