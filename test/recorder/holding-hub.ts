/**
 * A witness hub run by a test that holds a close at a point the test controls: it answers every
 * request at once but the second chain head (the close's session.end), which it holds until
 * `release`. A stop asked meanwhile lands inside the close every time.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function holdingHub(): Promise<{
  url: string;
  held: Promise<void>;
  release: () => void;
  close: () => Promise<void>;
}> {
  let heads = 0;
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'logged', log_index: heads }));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (!/\/heads$/.test(req.url ?? '') || ++heads < 2) return answer(res);
      onHeld();
      void released.then(() => answer(res));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', () => ready()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    held,
    release,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
