/**
 * The browser verifier script, as `npm run build` bundled it next to this module
 * (dist/src/hub/pages/verifier.js): served by the hub at /pages/verifier.js and embedded whole in
 * offline receipts.
 */
import { readFileSync } from 'node:fs';
import { PagesError } from './errors.js';

export { PagesError };

let cached: string | null = null;

export function verifierScript(): string {
  if (cached !== null) return cached;
  const url = new URL('./verifier.js', import.meta.url);
  try {
    cached = readFileSync(url, 'utf8');
  } catch {
    throw new PagesError(
      'no-verifier',
      `the browser verifier is not built (${url.pathname}); run 'npm run build'`,
    );
  }
  return cached;
}
