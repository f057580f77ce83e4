/** The hub's pages and the offline receipt (docs/hub.md#pages). */
export { type AgentPageInput, agentPage } from './agent-page.js';
export { PagesError } from './errors.js';
export { type IndexPageInput, indexPage } from './index-page.js';
export { contentSecurityPolicy } from './layout.js';
export { renderOfflineReceipt } from './offline.js';
export { viewPackage } from './package-view.js';
export { receiptPage } from './receipt-page.js';
export { verifierScript } from './script.js';
