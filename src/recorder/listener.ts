/**
 * Who listens on the recorder's port, asked of the kernel before the secret is sent there. The port
 * is kept in `recorder.json` for good, so while the recorder is down any local user can listen on
 * it: a client that sent its bearer token to whoever answers would hand the secret to that user,
 * and take that user's answers for the recorder's. On Linux the listening socket's owner is in
 * `/proc/net/tcp` (and `tcp6`); a listener of another user is refused before anything is sent.
 * Elsewhere (no `/proc`) nothing is checked. Only node: built-ins: the command shim runs this on
 * every hook.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** A socket's state in /proc/net/tcp: 0A is LISTEN. */
const LISTEN = '0A';

/** 127.0.0.1, 0.0.0.0, ::ffff:127.0.0.1 and :: as /proc spells them (32-bit words in host order). */
function takers(): [file: string, address: string][] {
  // Without node:os (the shim's bundle loads it only when needed): the byte order, seen directly.
  const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const loopback = little ? '0100007F' : '7F000001';
  const mapped = little ? '0000000000000000FFFF0000' : '00000000000000000000FFFF';
  // The most specific listener takes a connection to 127.0.0.1 (how Linux picks one): in this order.
  return [
    ['/proc/net/tcp', loopback],
    ['/proc/net/tcp', '00000000'],
    ['/proc/net/tcp6', `${mapped}${loopback}`],
    ['/proc/net/tcp6', '0'.repeat(32)],
  ];
}

/**
 * The listening sockets of `file`, one line at a time: `[local address, uid]`. Read one line's width
 * at a time and only up to the first socket that does not listen (the kernel lists the listening
 * ones first): reading on to fill a larger buffer makes the kernel walk its whole table of
 * connections, milliseconds a hook on a large machine, where these few lines take microseconds.
 */
function* listening(file: string): Generator<[string, number]> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return;
  }
  try {
    const chunk = Buffer.alloc(150);
    let rest = '';
    let header = true;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return;
      const lines = (rest + chunk.toString('latin1', 0, n)).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (header) {
          header = false;
          continue;
        }
        const fields = line.trim().split(/\s+/);
        if (fields[3] !== LISTEN) return;
        yield [fields[1]!, Number(fields[7])];
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The uid of the process listening where a connection to 127.0.0.1:`port` goes, or undefined when
 * the kernel does not say (no `/proc`, or nothing listens there).
 */
export function listenerUid(port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const seen = new Map<string, number>();
  const read = new Set<string>();
  for (const [file, address] of takers()) {
    const wanted = `${address}:${hex}`;
    if (!read.has(file)) {
      read.add(file);
      try {
        for (const [local, uid] of listening(file)) {
          if (!seen.has(local)) seen.set(local, uid);
          // The most specific listener found: none read later would take the connection from it.
          if (local === wanted) break;
        }
      } catch {
        // a read that failed says nothing
      }
    }
    const uid = seen.get(wanted);
    if (uid !== undefined && Number.isInteger(uid)) return uid;
  }
  return undefined;
}

/**
 * Why the secret must not go to 127.0.0.1:`port`, or undefined when it may: the listener there
 * belongs to another user.
 */
export function foreignListener(port: number): string | undefined {
  const mine = process.getuid?.();
  if (mine === undefined) return undefined;
  const uid = listenerUid(port);
  if (uid === undefined || uid === mine) return undefined;
  return `127.0.0.1:${port} is held by a process of uid ${uid}, not this user's recorder (uid ${mine}): the recorder's secret is not sent there`;
}
