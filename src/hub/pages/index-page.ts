/** The hub's front page: recent receipts and agents, and what a search found. */

import { unauthorizedBadge } from './agent-page.js';
import { html } from './html.js';
import { page } from './layout.js';
import type { Json } from './read.js';

export interface IndexPageInput {
  query: string | null;
  receipts: {
    session: string;
    agent: string | null;
    ship_id: string;
    started_at: string | null;
    checks: Json;
  }[];
  agents: { slug: string; ship_id: string }[];
  origin: string;
}

export function indexPage(input: IndexPageInput): string {
  const searching = input.query !== null && input.query !== '';
  return page({
    title: searching ? `Search: ${input.query} · Tally` : 'Tally hub',
    search: true,
    body: html`<h1>${searching ? html`Results for “${input.query}”` : 'Tally hub'}</h1>
<p class="muted">Log <span class="mono">${input.origin}</span>. Every receipt here was verified when it arrived; each receipt page verifies it again in your browser.</p>
<section aria-labelledby="recent-receipts"><h2 id="recent-receipts">${searching ? 'Receipts' : 'Recent receipts'}</h2>
${
  input.receipts.length === 0
    ? html`<p class="muted">No receipts${searching ? ' match' : ' yet'}.</p>`
    : html`<ul>${input.receipts.map(
        (r) =>
          html`<li><a class="mono" href="/receipt/${encodeURIComponent(r.session)}">${r.session}</a> ${r.agent ? html`<a href="/agent/${encodeURIComponent(r.agent)}">${r.agent}</a>` : null} <span class="muted">${r.started_at ?? ''}</span> ${unauthorizedBadge(r.checks)}</li>`,
      )}</ul>`
}</section>
<section aria-labelledby="recent-agents"><h2 id="recent-agents">${searching ? 'Agents' : 'Agents'}</h2>
${
  input.agents.length === 0
    ? html`<p class="muted">No agents${searching ? ' match' : ' yet'}.</p>`
    : html`<ul>${input.agents.map((a) => html`<li><a href="/agent/${encodeURIComponent(a.slug)}">${a.slug}</a> <span class="muted mono">${a.ship_id}</span></li>`)}</ul>`
}</section>`,
  });
}
