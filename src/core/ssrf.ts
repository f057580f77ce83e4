/**
 * The guard in front of every URL fetched because of data received (a certificate named by URL
 * in an upload, a link in a hub's answer): only http(s), no credentials, and never a loopback,
 * private, link-local, shared, reserved or metadata address, by literal or by name. The check
 * runs twice: on the URL (checkFetchUrl), and on every address a name resolves to at connect time
 * (guardedLookup), so a name that resolves to 127.0.0.1 (or re-resolves to it) is refused too.
 * A URL the user typed (`--hub`) is trusted as given and never passes through here.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { TallyError } from './errors.js';

export type SsrfErrorCode = 'bad-url' | 'scheme' | 'credentials' | 'private-address' | 'private-name';

export class SsrfError extends TallyError<SsrfErrorCode> {}

/** [network, prefix length] of every IPv4 range no fetch may reach. */
const IPV4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], // this network
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // RFC 6598 shared (CGNAT; cloud metadata)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (instance metadata)
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and broadcast
];

/** Names that only ever mean something inside a network. */
const PRIVATE_NAMES = [
  /^localhost$/,
  /\.localhost$/,
  /\.local$/,
  /\.internal$/,
  /\.home\.arpa$/,
  /\.lan$/,
  /\.intranet$/,
  /\.corp$/,
];

function ipv4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function blockedIpv4(ip: string): boolean {
  const n = ipv4Number(ip);
  return IPV4_BLOCKED.some(([net, bits]) => {
    const size = 2 ** (32 - bits);
    const start = ipv4Number(net);
    return n >= start && n < start + size;
  });
}

/** The 8 groups of an IPv6 address as numbers (handles :: and a dotted IPv4 tail). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [, p, q, r, s] = v4.map(Number) as [number, number, number, number, number];
    text = `${text.slice(0, v4.index)}${((p << 8) | q).toString(16)}:${((r << 8) | s).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const fill =
    rest === undefined ? [] : new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0);
  return [...left, ...fill, ...right];
}

function blockedIpv6(ip: string): boolean {
  const g = ipv6Groups(ip);
  if (g.length !== 8) return true;
  const [a, b] = g as [number, number];
  const embeddedV4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (g.every((x) => x === 0)) return true; // ::
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true; // ::1
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return blockedIpv4(embeddedV4(g[6]!, g[7]!)); // mapped
  if (g.slice(0, 6).every((x) => x === 0)) return true; // IPv4-compatible (deprecated)
  if (a === 0x64 && b === 0xff9b) return blockedIpv4(embeddedV4(g[6]!, g[7]!)); // NAT64
  if (a === 0x2002) return blockedIpv4(embeddedV4(b, g[2]!)); // 6to4
  if ((a & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((a & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((a & 0xffc0) === 0xfec0) return true; // site-local (deprecated)
  if ((a & 0xff00) === 0xff00) return true; // multicast
  if (a === 0x2001 && b === 0x0db8) return true; // documentation
  if (a === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return true; // discard 100::/64
  if (a === 0x2001 && b < 0x0200) return true; // 2001::/23 IETF protocol assignments (Teredo, ORCHID…)
  return false;
}

/** True when an IP address literal is one a fetch may reach. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return !blockedIpv4(ip);
  if (family === 6) return !blockedIpv6(ip);
  return false;
}

/** Checks a URL received in data before anything is fetched; returns it parsed. */
export function checkFetchUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SsrfError('bad-url', `${JSON.stringify(text)} is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new SsrfError('scheme', `${url.protocol} URLs are not fetched (only http and https)`, {
      url: text,
    });
  if (url.username !== '' || url.password !== '')
    throw new SsrfError('credentials', 'a URL with credentials in it is not fetched', { url: url.host });
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    if (!isPublicAddress(host))
      throw new SsrfError('private-address', `${host} is not a public address`, { url: text });
    return url;
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  if (
    !name.includes('.') ||
    PRIVATE_NAMES.some((pattern) => pattern.test(name)) ||
    name === 'metadata.google.internal'
  )
    throw new SsrfError('private-name', `${name} is a local or internal name`, { url: text });
  return url;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request / https.request: resolves the name and refuses the connection if
 * any address it resolves to is not public, so DNS cannot point a checked name inside.
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string } | number,
  callback: LookupCallback,
): void {
  const opts = typeof options === 'number' ? { family: options } : options;
  dnsLookup(
    hostname,
    { all: true, ...(opts.family ? { family: Number(opts.family) || 0 } : {}) },
    (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => !isPublicAddress(a.address));
      if (bad || list.length === 0) {
        const refusal = new SsrfError(
          'private-address',
          `${hostname} resolves to ${bad?.address ?? 'nothing'}, which is not a public address`,
        ) as unknown as NodeJS.ErrnoException;
        return callback(refusal, []);
      }
      if (opts.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    },
  );
}
