/**
 * Tally's public library API (docs/api.md). The root holds the trust core, the evidence layer,
 * the Agent Hooks Protocol and the boundary; the same are importable by concern from the subpaths
 * `tally/core`, `tally/evidence`, `tally/ahp`, `tally/backend`. Every error class is exported here
 * as a value. Anything not exported is internal and may change.
 */
export * from './ahp/index.js';
export * from './boundary/index.js';
export { McpGatewayError, type McpGatewayErrorCode } from './capture/mcp/gateway.js';
export { ReconcileError, type ReconcileErrorCode } from './capture/reconcile/error.js';
export { type Captured, CaptureError, type CaptureErrorCode, type HarnessAgent } from './capture/types.js';
export * from './core/index.js';
export * from './evidence/index.js';
// The hub's error classes (the server itself is reached only through the CLI).
export { HubIdentityError } from './hub/identity.js';
export { PagesError } from './hub/pages/errors.js';
export { HubHttpError } from './hub/server/errors.js';
export { HubStoreError } from './hub/store/hub-store.js';
export * from './hub-client/index.js';
export { RecorderError, type RecorderErrorCode } from './recorder/config.js';
export { SessionError, type SessionErrorCode } from './session/store.js';
