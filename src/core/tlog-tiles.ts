/**
 * C2SP tlog-checkpoint note bodies and tlog-tiles resource names and encodings.
 *
 * A checkpoint body is `<origin>\n<size>\n<base64 root>\n[extension lines]`. Tiles are
 * `tile/<L>/<N>[.p/<W>]`, entry bundles `tile/entries/<N>[.p/<W>]`, N written as 3-digit groups
 * with all but the last prefixed by `x`. A full tile holds 256 hashes; the tile at level L holds
 * the hashes of the level-8L nodes. An entry bundle is the entries, each prefixed with its length
 * as a big-endian uint16.
 */
import { TallyError } from './errors.js';

export type TlogErrorCode = 'bad-checkpoint' | 'bad-path' | 'bad-bundle';

export class TlogError extends TallyError<TlogErrorCode> {}

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
export const MAX_ENTRY_BYTES = 0xffff;

export interface Checkpoint {
  origin: string;
  size: number;
  /** 32-byte RFC 9162 root hash. */
  root: Buffer;
  extensions: string[];
}

export function formatCheckpoint(checkpoint: Checkpoint): string {
  if (!checkpoint.origin || /\n/.test(checkpoint.origin))
    throw new TlogError('bad-checkpoint', 'the origin must be one non-empty line');
  if (!Number.isSafeInteger(checkpoint.size) || checkpoint.size < 0)
    throw new TlogError('bad-checkpoint', 'the tree size must be a non-negative integer');
  if (checkpoint.root.length !== 32) throw new TlogError('bad-checkpoint', 'the root must be 32 bytes');
  const lines = [checkpoint.origin, String(checkpoint.size), checkpoint.root.toString('base64')];
  for (const line of checkpoint.extensions) {
    if (line.length === 0 || line.includes('\n'))
      throw new TlogError('bad-checkpoint', 'extension lines must be non-empty single lines');
    lines.push(line);
  }
  return `${lines.join('\n')}\n`;
}

/** Reads a checkpoint note text (already verified as a signed note). */
export function parseCheckpoint(text: string): Checkpoint {
  if (!text.endsWith('\n')) throw new TlogError('bad-checkpoint', 'checkpoint text must end in a newline');
  const lines = text.slice(0, -1).split('\n');
  const [origin, size, root, ...extensions] = lines;
  if (!origin || size === undefined || root === undefined)
    throw new TlogError('bad-checkpoint', 'a checkpoint has at least three lines');
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size)))
    throw new TlogError('bad-checkpoint', `tree size ${JSON.stringify(size)} is not a decimal integer`);
  const hash = Buffer.from(root, 'base64');
  if (hash.length !== 32 || hash.toString('base64') !== root)
    throw new TlogError('bad-checkpoint', 'the root hash is not base64 of 32 bytes');
  if (extensions.some((line) => line.length === 0))
    throw new TlogError('bad-checkpoint', 'extension lines must be non-empty');
  return { origin, size: Number(size), root: hash, extensions };
}

export interface TileName {
  /** 0..63 for hash tiles; 'entries' for an entry bundle. */
  level: number | 'entries';
  index: number;
  /** 1..256; 256 is a full tile (no .p/ suffix). */
  width: number;
}

function encodeIndex(index: number): string {
  const groups: string[] = [];
  let n = index;
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

export function tilePath(name: TileName): string {
  if (!Number.isSafeInteger(name.index) || name.index < 0)
    throw new TlogError('bad-path', 'the tile index must be a non-negative integer');
  if (!Number.isInteger(name.width) || name.width < 1 || name.width > TILE_WIDTH)
    throw new TlogError('bad-path', 'the tile width must be 1..256');
  if (name.level !== 'entries' && (!Number.isInteger(name.level) || name.level < 0 || name.level > 63))
    throw new TlogError('bad-path', 'the tile level must be 0..63');
  const partial = name.width < TILE_WIDTH ? `.p/${name.width}` : '';
  return `tile/${name.level}/${encodeIndex(name.index)}${partial}`;
}

/** Parses a path `tile/…` (no leading slash); throws `bad-path` for anything not in canonical form. */
export function parseTilePath(path: string): TileName {
  const match =
    /^tile\/(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*)([0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(path);
  if (!match) throw new TlogError('bad-path', `${path} is not a tile path`);
  const [, levelText, prefix, last, widthText] = match as unknown as [
    string,
    string,
    string,
    string,
    string?,
  ];
  const level = levelText === 'entries' ? 'entries' : Number(levelText);
  if (level !== 'entries' && level > 63) throw new TlogError('bad-path', 'the tile level must be 0..63');
  const groups = [
    ...prefix
      .split('/')
      .filter(Boolean)
      .map((g) => g.slice(1)),
    last,
  ];
  if (groups.length > 1 && groups[0] === '000')
    throw new TlogError('bad-path', `${path} has a leading zero group`);
  if (groups.length > 6) throw new TlogError('bad-path', `${path} has too large an index`);
  const index = groups.reduce((n, g) => n * 1000 + Number(g), 0);
  const width = widthText === undefined ? TILE_WIDTH : Number(widthText);
  if (widthText !== undefined && width >= TILE_WIDTH)
    throw new TlogError('bad-path', 'a partial tile has width 1..255');
  return { level, index, width };
}

/** Entry bundle bytes: each entry as uint16 big-endian length || bytes. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    if (entry.length > MAX_ENTRY_BYTES)
      throw new TlogError('bad-bundle', `an entry of ${entry.length} bytes is over the 65535 a bundle holds`);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(entry.length, 0);
    parts.push(length, Buffer.from(entry));
  }
  return Buffer.concat(parts);
}

export function parseEntryBundle(bytes: Uint8Array): Buffer[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    if (at + 2 > buf.length) throw new TlogError('bad-bundle', `entry bundle ends inside a length at ${at}`);
    const length = buf.readUInt16BE(at);
    if (at + 2 + length > buf.length)
      throw new TlogError('bad-bundle', `entry bundle ends inside the entry at ${at}`);
    entries.push(Buffer.from(buf.subarray(at + 2, at + 2 + length)));
    at += 2 + length;
  }
  return entries;
}
