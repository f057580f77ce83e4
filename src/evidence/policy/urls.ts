/**
 * URLs before host matching (`WebFetch(domain:example.com)`). Agents and their tools read URLs
 * differently, so a URL is read two ways and a `domain:` pattern sees every host either reading
 * gives: the WHATWG URL parser (what Node and browsers fetch; it applies IDNA, lower-cases, reads
 * `\` as `/` and decodes IPv4 forms) and RFC 3986 (authority up to `/?#`, host after the last `@`).
 * A scheme-less URL is read as https; trailing dots go. Semantics: docs/policy.md, "URLs".
 */

import { isJsonObject } from '../../core/json.js';

export interface UrlHosts {
  /** Every host a fetcher could take the URL to mean, normalised. */
  hosts: string[];
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** A host as a pattern or URL gives it: IDNA (punycode), lower case, no trailing dots, no brackets. */
export function normaliseHost(host: string): string | undefined {
  const bare = host.trim().replace(/\.+$/, '');
  if (bare === '') return undefined;
  try {
    return new URL(
      `http://${bare.includes(':') && !bare.startsWith('[') ? `[${bare}]` : bare}/`,
    ).hostname.replace(/\.+$/, '');
  } catch {
    return bare.toLowerCase();
  }
}

/** `//h/x`, `h/x` and `https:h` all fetch from `h` over https (or the scheme given). */
function withExplicitScheme(text: string): string {
  if (text.startsWith('//')) return `https:${text}`;
  const special = /^(https?|wss?|ftp):[\\/]*(.*)$/is.exec(text);
  if (special !== null) return `${special[1]}://${special[2]}`;
  return SCHEME.test(text) && text.includes('://') ? text : `https://${text}`;
}

/** The hosts a URL names under either reading (empty when it names none). */
export function urlHosts(text: string): string[] {
  const withScheme = withExplicitScheme(text.trim());
  const hosts = new Set<string>();
  try {
    const host = new URL(withScheme).hostname;
    const normal = host === '' ? undefined : normaliseHost(host);
    if (normal !== undefined) hosts.add(normal);
  } catch {
    // Not a WHATWG URL; the RFC 3986 reading below may still name a host.
  }
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(withScheme)?.[1];
  if (authority !== undefined) {
    const afterUser = authority.slice(authority.lastIndexOf('@') + 1);
    const host = afterUser.startsWith('[')
      ? afterUser.slice(0, afterUser.indexOf(']') + 1)
      : afterUser.replace(/:[^:]*$/, '');
    let decoded = host;
    try {
      decoded = decodeURIComponent(host);
    } catch {
      // Keep the percent-encoded form.
    }
    const normal = normaliseHost(decoded.replace(/\\.*$/, ''));
    if (normal !== undefined) hosts.add(normal);
  }
  return [...hosts];
}

/** True when `host` is `domain` or one of its subdomains (both normalised). */
export function hostInDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

export const URL_FIELDS = [
  'url',
  'uri',
  'href',
  'link',
  'endpoint',
  'website',
  'page',
  'source_url',
  'target_url',
] as const;
export const URLS_FIELDS = ['urls', 'uris', 'links', 'hrefs'] as const;
const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'<>`]+/g;

/** A string that names a fetchable place: a scheme with `//`, or a scheme-less `//host`. */
const URL_VALUE = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|\/\/)\S+$/;

/**
 * Every URL a call's input names: the URL fields, URL lists, URLs inside a prompt, and any other
 * string field (nested too, a few levels deep) whose value is a URL, so no field name hides one.
 */
export function urlsOf(input: unknown): string[] {
  if (typeof input === 'string') return [...input.matchAll(URL_IN_TEXT)].map((m) => m[0]);
  if (!isJsonObject(input)) return [];
  const urls: string[] = [];
  const add = (u: unknown): void => {
    if (typeof u === 'string' && u !== '' && !urls.includes(u)) urls.push(u);
  };
  for (const field of URL_FIELDS) add(input[field]);
  for (const field of URLS_FIELDS) {
    const list = input[field];
    if (Array.isArray(list)) list.forEach(add);
  }
  const visit = (value: unknown, depth: number): void => {
    if (typeof value === 'string') {
      if (URL_VALUE.test(value)) add(value);
    } else if (depth < 4 && Array.isArray(value)) for (const item of value) visit(item, depth + 1);
    else if (depth < 4 && isJsonObject(value))
      for (const item of Object.values(value)) visit(item, depth + 1);
  };
  visit(input, 0);
  // Gemini CLI's web_fetch takes a prompt with the URLs inside it.
  const prompt = input.prompt;
  if (typeof prompt === 'string' && urls.length === 0)
    for (const m of prompt.matchAll(URL_IN_TEXT)) add(m[0]);
  return urls;
}

/** True when a string is a URL as a whole (`https://…`, `//host/…`). */
export function isUrlValue(text: string): boolean {
  return URL_VALUE.test(text);
}
