/**
 * The one page frame every hub page and the offline receipt share: a header with the search form,
 * the style sheet inline (no external fonts, no CDN), and a Content-Security-Policy that allows
 * scripts only from the hub itself or, offline, only the embedded script by its hash.
 */
import { createHash } from 'node:crypto';
import { type Html, html, raw } from './html.js';
import { STYLE } from './style.js';

export interface PageOptions {
  title: string;
  body: Html;
  /** Hub pages: the verifier script's path on the hub. */
  scriptSrc?: string;
  /** Offline pages: the verifier script itself, embedded. */
  inlineScript?: string;
  /** Show the hub's search form (not in the offline file). */
  search?: boolean;
}

/** The policy for hub pages (sent as a header) and, with the script's hash, for the offline file. */
export function contentSecurityPolicy(inlineScript?: string): string {
  const script =
    inlineScript === undefined
      ? "'self'"
      : `'sha256-${createHash('sha256').update(inlineScript, 'utf8').digest('base64')}'`;
  const connect = inlineScript === undefined ? "'self'" : "'none'";
  return [
    "default-src 'none'",
    `script-src ${script}`,
    "style-src 'unsafe-inline'",
    "img-src 'none'",
    `connect-src ${connect}`,
    "base-uri 'none'",
    inlineScript === undefined ? "form-action 'self'" : "form-action 'none'",
  ].join('; ');
}

export function page(options: PageOptions): string {
  const csp = options.inlineScript === undefined ? null : contentSecurityPolicy(options.inlineScript);
  const script =
    options.scriptSrc !== undefined
      ? html`<script src="${options.scriptSrc}" defer></script>`
      : options.inlineScript !== undefined
        ? raw(`<script>${options.inlineScript.replace(/<\/script/gi, '<\\/script')}</script>`)
        : null;
  const search = options.search
    ? html`<form class="search" role="search" action="/" method="get"><label for="q">Search receipts and agents</label><input id="q" name="q" type="search" placeholder="agent, ship or session id"><button type="submit">Search</button></form>`
    : null;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${csp === null ? null : html`<meta http-equiv="Content-Security-Policy" content="${csp}">`}
<title>${options.title}</title>
<style>${raw(STYLE)}</style>
</head><body>
<header class="top"><a class="brand" href="${options.search ? '/' : '#top'}">Tally</a>${search}</header>
<main id="top">
${options.body}
</main>
${script}
</body></html>
`.text;
}
