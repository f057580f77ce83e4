/**
 * Runs the real `tally` command on a pseudo-terminal (Python's `pty`, as a person's terminal would
 * be), answering each prompt when it appears: the only way to drive commands that read from a
 * terminal and nowhere else.
 */
import { spawn } from 'node:child_process';
import { TALLY_BIN } from './tally-process.js';

const DRIVER = `
import json, os, pty, select, sys
steps = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out = b''
pos = 0
def more(wait):
    global out
    r, _, _ = select.select([fd], [], [], wait)
    if not r:
        return False
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        return False
    if not chunk:
        return False
    out += chunk
    return True
for expect, send in steps:
    while out.find(expect.encode(), pos) < 0:
        if not more(120):
            sys.stdout.write(out.decode('utf8', 'replace'))
            sys.stderr.write('pty: the prompt %r never came\\n' % expect)
            os.kill(pid, 9)
            sys.exit(99)
    pos = out.find(expect.encode(), pos) + len(expect)
    os.write(fd, (send + '\\r').encode())
while more(120):
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode('utf8', 'replace'))
sys.exit(os.waitstatus_to_exitcode(status))
`;

export interface PtyRan {
  code: number | null;
  /** Everything the terminal showed (stdout and stderr together, as a terminal does). */
  screen: string;
  stderr: string;
}

/** `steps`: [prompt text to wait for, line to type]. */
export function tallyOnPty(
  args: string[],
  steps: [string, string][],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<PtyRan> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'python3',
      ['-c', DRIVER, JSON.stringify(steps), process.execPath, TALLY_BIN, ...args],
      { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let screen = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      screen += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, screen, stderr }));
  });
}
