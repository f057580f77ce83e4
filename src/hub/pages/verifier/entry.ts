/**
 * The browser bundle's entry (built by scripts/build-bundles.mjs into
 * dist/src/hub/pages/verifier.js): the verifier for tests and pages, and the panel that runs it.
 */
import { headerKeys, inclusionInBrowser, verifyInBrowser, witnessInBrowser } from './check.js';
import { startPanel } from './panel.js';

const api = { verifyInBrowser, inclusionInBrowser, witnessInBrowser, headerKeys };
(globalThis as { tallyVerifier?: typeof api }).tallyVerifier = api;

if (typeof document !== 'undefined') {
  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', () => void startPanel());
  else void startPanel();
}
