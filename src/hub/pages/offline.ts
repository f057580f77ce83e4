/**
 * `tally receipt render`: the receipt page as one self-contained file — the page, the verifier
 * script and the package bytes together, with a Content-Security-Policy that lets only that
 * script run and forbids every connection, so opening it makes no network request.
 */
import { viewPackage } from './package-view.js';
import { receiptPage } from './receipt-page.js';
import { verifierScript } from './script.js';

export function renderOfflineReceipt(bytes: Buffer): string {
  return receiptPage({
    view: viewPackage(bytes),
    data: { mode: 'offline', package: bytes.toString('base64') },
    inlineScript: verifierScript(),
  });
}
