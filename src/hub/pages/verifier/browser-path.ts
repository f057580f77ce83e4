/**
 * `node:path` for the browser bundle: the POSIX functions the policy and receipt code use, with
 * Node's semantics (there is no working directory here, so `resolve` starts from "/").
 */

function normalizeParts(path: string, absolute: boolean): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
    } else out.push(part);
  }
  return out.join('/');
}

function normalize(path: string): string {
  if (path === '') return '.';
  const absolute = path.startsWith('/');
  const trailing = path.endsWith('/');
  let body = normalizeParts(path, absolute);
  if (body === '' && !absolute) body = '.';
  if (body !== '' && trailing) body += '/';
  return absolute ? `/${body}` : body;
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/');
}

function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== '').join('/');
  return joined === '' ? '.' : normalize(joined);
}

function resolve(...parts: string[]): string {
  let resolved = '';
  for (let i = parts.length - 1; i >= 0 && !resolved.startsWith('/'); i--) {
    const part = parts[i]!;
    if (part === '') continue;
    resolved = resolved === '' ? part : `${part}/${resolved}`;
  }
  const body = normalizeParts(resolved, true);
  return `/${body}`;
}

function relative(from: string, to: string): string {
  const a = resolve(from).split('/').filter(Boolean);
  const b = resolve(to).split('/').filter(Boolean);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
}

function basename(path: string, ext?: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === '/') end--;
  const trimmed = path.slice(0, end);
  let base = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  if (ext !== undefined && ext !== base && base.endsWith(ext)) base = base.slice(0, base.length - ext.length);
  return base;
}

function dirname(path: string): string {
  if (path === '') return '.';
  let end = path.length;
  while (end > 1 && path[end - 1] === '/') end--;
  const slash = path.lastIndexOf('/', end - 1);
  if (slash < 0) return '.';
  if (slash === 0) return '/';
  return path.slice(0, slash);
}

export const posix = { normalize, isAbsolute, join, resolve, relative, basename, dirname, sep: '/' };
export { basename, dirname, isAbsolute, join, normalize, relative, resolve };
export default posix;
