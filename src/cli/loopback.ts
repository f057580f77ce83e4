/**
 * The command shim's one TCP connection to the recorder on 127.0.0.1. `node:net` is the public way
 * to open one, but loading it (with the stream machinery under it) costs a hook process about six
 * milliseconds, a fifth of Node's whole start. The shim needs none of that: one connect, one write,
 * reads until the answer is whole. So it drives libuv's TCP handle directly, through the same
 * `tcp_wrap` and `stream_wrap` bindings `node:net` itself is built on. Those are internal (reached
 * through `process.binding`, deprecated in documentation only, DEP0111), so they are used only on
 * the Node major this file was verified on (test/cli/hook-post.test.ts runs every case both ways),
 * and `node:net` serves wherever they are missing, shaped otherwise, refused (the permission model)
 * or would print a deprecation warning (`--pending-deprecation`), and on every other major.
 * `TALLY_HOOK_SOCKET=net` or `=binding` chooses. Both give the caller the same three events.
 */
import { getSystemErrorName } from 'node:util';

export interface LoopbackEvents {
  data(chunk: Buffer): void;
  /** The recorder closed its side. */
  end(): void;
  /** The connection failed; `code` is the system's name for why (ECONNREFUSED, ECONNRESET…). */
  error(code: string): void;
}

export interface Loopback {
  write(bytes: Buffer): void;
  /** Done with it: the connection keeps no process up and reports nothing more. */
  release(): void;
  /** Failed or timed out: closed now. */
  destroy(): void;
  /** Which way it was opened. */
  readonly via: 'binding' | 'net';
}

interface TcpHandle {
  connect(req: object, address: string, port: number): number;
  writeBuffer(req: object, bytes: Buffer): number;
  readStart(): number;
  close(callback?: () => void): void;
  /** Must always be a function: the binding aborts the process on anything else. */
  onread: (buffer: ArrayBuffer | undefined) => void;
}

interface Bindings {
  TCP: new (type: number) => TcpHandle;
  TCPConnectWrap: new () => { oncomplete?: (status: number) => void };
  WriteWrap: new () => { handle?: TcpHandle; oncomplete?: (status: number) => void; buffer?: Buffer };
  socketType: number;
  state: Int32Array;
  readBytes: number;
  bufferOffset: number;
}

let bindings: Bindings | null | undefined;

/** The Node majors on which the bindings were checked to behave as used here. */
export const VERIFIED_MAJORS: readonly string[] = ['20'];

/** libuv's TCP bindings, when this Node has them in the shape used here; else null. */
function loadBindings(env: NodeJS.ProcessEnv): Bindings | null {
  if (env.TALLY_HOOK_SOCKET === 'net') return null;
  if (bindings !== undefined) return bindings;
  bindings = null;
  const warns =
    process.execArgv.includes('--pending-deprecation') ||
    /--pending-deprecation/.test(env.NODE_OPTIONS ?? '') ||
    env.NODE_PENDING_DEPRECATION === '1';
  const binding = (process as unknown as { binding?: (name: string) => Record<string, unknown> }).binding;
  const verified = VERIFIED_MAJORS.includes(process.versions.node.split('.')[0]!);
  if ((!verified && env.TALLY_HOOK_SOCKET !== 'binding') || warns || typeof binding !== 'function')
    return null;
  try {
    const tcp = binding.call(process, 'tcp_wrap');
    const stream = binding.call(process, 'stream_wrap');
    const constants = tcp.constants as { SOCKET?: unknown } | undefined;
    if (
      typeof tcp.TCP === 'function' &&
      typeof tcp.TCPConnectWrap === 'function' &&
      typeof stream.WriteWrap === 'function' &&
      typeof constants?.SOCKET === 'number' &&
      stream.streamBaseState instanceof Int32Array &&
      typeof stream.kReadBytesOrError === 'number' &&
      typeof stream.kArrayBufferOffset === 'number'
    )
      bindings = {
        TCP: tcp.TCP as Bindings['TCP'],
        TCPConnectWrap: tcp.TCPConnectWrap as Bindings['TCPConnectWrap'],
        WriteWrap: stream.WriteWrap as Bindings['WriteWrap'],
        socketType: constants.SOCKET,
        state: stream.streamBaseState,
        readBytes: stream.kReadBytesOrError,
        bufferOffset: stream.kArrayBufferOffset,
      };
  } catch {
    // refused (the permission model) or gone: node:net it is
  }
  return bindings;
}

function viaBinding(b: Bindings, port: number, events: LoopbackEvents): Loopback {
  const handle = new b.TCP(b.socketType);
  let open = true;
  let connected = false;
  const queued: Buffer[] = [];
  const close = () => {
    if (!open) return;
    open = false;
    handle.close();
  };
  const fail = (status: number) => {
    if (!open) return;
    close();
    events.error(getSystemErrorName(status));
  };
  const send = (bytes: Buffer) => {
    const req = new b.WriteWrap();
    req.handle = handle;
    req.buffer = bytes; // kept alive while libuv may still be writing it
    req.oncomplete = (status) => {
      if (status < 0) fail(status);
    };
    const status = handle.writeBuffer(req, bytes);
    if (status < 0) fail(status);
  };
  handle.onread = (buffer) => {
    const n = b.state[b.readBytes]!;
    if (n > 0 && buffer !== undefined) events.data(Buffer.from(buffer, b.state[b.bufferOffset]!, n));
    else if (n < 0) {
      if (getSystemErrorName(n) !== 'EOF') return fail(n);
      close();
      events.end();
    }
  };
  const connect = new b.TCPConnectWrap();
  connect.oncomplete = (status) => {
    if (status < 0) return fail(status);
    connected = true;
    const started = handle.readStart();
    if (started < 0) return fail(started);
    for (const bytes of queued.splice(0)) send(bytes);
  };
  let status: number;
  try {
    status = handle.connect(connect, '127.0.0.1', port);
  } catch (error) {
    close();
    throw error;
  }
  // Reported as an event, as node:net reports a connect that fails at once.
  if (status < 0) queueMicrotask(() => fail(status));
  return {
    via: 'binding',
    write(bytes) {
      if (!open) return;
      if (connected) send(bytes);
      else queued.push(bytes);
    },
    release: close,
    destroy: close,
  };
}

function viaNet(port: number, events: LoopbackEvents): Loopback {
  let socket: import('node:net').Socket | undefined;
  let done = false;
  const queued: Buffer[] = [];
  // Loaded only on this path, so the binding path never pays for it.
  void import('node:net').then(({ connect }) => {
    if (done) return;
    const s = connect({ host: '127.0.0.1', port });
    socket = s;
    s.on('data', (chunk: Buffer) => events.data(chunk));
    s.on('end', () => events.end());
    s.on('error', (error: NodeJS.ErrnoException) => {
      if (!done) events.error(error.code ?? error.message);
    });
    for (const bytes of queued.splice(0)) s.write(bytes);
  });
  return {
    via: 'net',
    write(bytes) {
      if (socket) socket.write(bytes);
      else queued.push(bytes);
    },
    // Not destroyed: the recorder closes it (connection: close), and destroying a socket sets up
    // process.stderr (net's debug log), a cost on every hook for nothing.
    release() {
      done = true;
      socket?.unref();
    },
    destroy() {
      done = true;
      socket?.destroy();
    },
  };
}

/** Opens a connection to 127.0.0.1:`port`; `events` hears what happens on it. */
export function connectLoopback(
  port: number,
  events: LoopbackEvents,
  env: NodeJS.ProcessEnv = process.env,
): Loopback {
  const b = loadBindings(env);
  if (b !== null) {
    try {
      return viaBinding(b, port, events);
    } catch {
      bindings = null; // shaped as expected but not working: node:net from now on
    }
  }
  return viaNet(port, events);
}
