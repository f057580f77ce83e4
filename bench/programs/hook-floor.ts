/**
 * The floor a hook request into the recorder is read against, in a process of its own: a bare
 * node:http server on 127.0.0.1 that, per request, reads the body, signs a record-sized message
 * (Ed25519 over the DSSE pre-authentication encoding of the body) and appends the line to a file,
 * durable before it answers — one fdatasync per request (`each`) or shared by every request that
 * arrived while a sync ran (`group`, as the recorder's file store does); or answers at once, with
 * nothing signed or written (`answer`: a hook client's own cost). Prints its port.
 */
import { sign } from 'node:crypto';

import { open } from 'node:fs/promises';
import { createServer } from 'node:http';
import { pae } from '../../src/core/dsse.js';
import { generateKeyPair } from '../../src/core/keys.js';

const [mode = 'each', file = '/dev/null'] = process.argv.slice(2);
const { privateKey } = generateKeyPair();
const handle = await open(file, 'a');
let queue: { line: Buffer; done: () => void }[] = [];
let flushing = false;

async function flush(): Promise<void> {
  if (flushing) return;
  flushing = true;
  while (queue.length > 0) {
    const batch = queue;
    queue = [];
    await handle.write(Buffer.concat(batch.map((b) => b.line)));
    await handle.datasync();
    for (const b of batch) b.done();
  }
  flushing = false;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const signature = sign(null, pae('application/vnd.tally.record+json', body), privateKey);
    const line = Buffer.from(
      `{"payload":"${body.toString('base64')}","sig":"${signature.toString('base64')}"}\n`,
    );
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
      res.end('{}');
    };
    if (mode === 'answer') answer();
    else if (mode === 'group') {
      queue.push({ line, done: answer });
      void flush();
    } else {
      void handle
        .write(line)
        .then(() => handle.datasync())
        .then(answer);
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => process.exit(0));
