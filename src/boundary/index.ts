/** The boundary: where a captured event is prepared, judged, recorded and answered (docs/architecture.md). */
export {
  type Boundary,
  type BoundaryDecision,
  type BoundaryEffects,
  type BoundaryOptions,
  type Clock,
  type EventContext,
  openBoundary,
  type Recorded,
} from './boundary.js';
export {
  CertificateBackendError,
  certificateHandler,
  isCertificateEntry,
  withCertificateJudge,
} from './certificate-backend.js';
export { BoundaryError, type BoundaryErrorCode, prepareEvent, REJECTED_EVENT_TYPE } from './prepare.js';
export { toolKindHint } from './tool-kind.js';
