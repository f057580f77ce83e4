/**
 * The public Agent Hooks Protocol API of Tally (docs/ahp.md). Harness side: parse a registration,
 * dispatch events through a `Dispatcher` over real transports, advertise capabilities. Backend
 * side: `createBackend` serves one handler over HTTP and stdio. Both sides validate every wire
 * message with `validateMessage` and friends. Anything not exported here is internal.
 */

// Backend side: the kit and the rule-file policy (also `tally/backend`).
export * from './backend/index.js';
export type {
  Candidate,
  Decision,
  Denial,
  HostCheck,
  InterceptCapabilities,
  InterceptState,
  Permission,
  Settlement,
} from './harness/compose.js';
export { dispositionFor, selectContent } from './harness/content.js';
export {
  DispatchError,
  type DispatchErrorCode,
  Dispatcher,
  type DispatcherOptions,
  type DispatchInput,
  type DispatchOutcome,
  dispatch,
  type SubscriptionReport,
  type SubscriptionStatus,
  SYNTHETIC_DENY_REASON,
  type TransportFactory,
} from './harness/dispatcher.js';
// Harness side: the wiring, dispatch, composition, matching, content selection.
export { createHarness, type Harness, HarnessError, type HarnessOptions } from './harness/harness.js';
export {
  type DeliveryMode,
  type MatchedSubscription,
  matchingSubscriptions,
  selectorMatches,
} from './harness/matching.js';
// Wire message validation.
export {
  FramingError,
  type FramingErrorCode,
  type InterceptRequestContext,
  inferMessageKind,
  type MessageKind,
  parseStdioLine,
  VALIDATED_EVENT_TYPES,
  validateEvent,
  validateInterceptResponse,
  validateMessage,
} from './messages/index.js';
export {
  type CapabilityManifest,
  capabilitiesResult,
  capabilityManifest,
  eventCapabilities,
  MAX_CONTINUATIONS,
  type ManifestEvent,
  type RequestCapabilities,
  type RequestCapabilityOptions,
  requestCapabilities,
} from './protocol/capabilities.js';
// Event catalogue and capability advertisement.
export {
  type CatalogueEntry,
  CORE_EFFECT_TYPES,
  type CoreEffectType,
  catalogueEntry,
  EVENT_CATALOGUE,
  EVENT_FAMILIES,
  type FlowOperation,
  INTERCEPTABLE_EVENTS,
  MODIFY_TARGETS,
  type ModifyTarget,
  REMOVED_EVENT_NAMES,
} from './protocol/catalogue.js';
export {
  type Admission,
  type AdmissionContext,
  type AdmissionRequirement,
  admitRegistration,
} from './registration/admission.js';
// Portable registration.
export {
  type ParsedRegistration,
  parseRegistration,
  parseRegistrationText,
  RegistrationError,
  type RegistrationErrorCode,
} from './registration/registration.js';
export type {
  Authentication,
  Backend,
  ContentDisposition,
  ContentSelection,
  EventSelector,
  Issue,
  OAuthPreset,
  Registration,
  Subscription,
  TransportConfig,
  UploadBinding,
} from './registration/types.js';
export { SUPPORTED_PROTOCOL_VERSION } from './registration/types.js';
// Transports, endpoint authentication, secrets, uploads.
export { EndpointAuth, type EndpointAuthOptions } from './transports/auth.js';
export {
  createTransport,
  type Logger,
  type LogLevel,
  type OAuthClientChoice,
  type OAuthClientPolicy,
  silentLogger,
  type TransportOptions,
} from './transports/index.js';
export { type MemoryHandler, memoryTransport } from './transports/memory.js';
// The local OAuth client file behind `oauthClients` (docs/ahp-transports.md).
export {
  OAuthClientsError,
  type OAuthClientsErrorCode,
  parseOAuthClients,
} from './transports/oauth-clients.js';
export {
  fileSecretProvider,
  SecretError,
  type SecretErrorCode,
  type SecretProvider,
  tallyHome,
} from './transports/secrets.js';
export {
  type BackendTransport,
  type JsonRpcNotification,
  type JsonRpcRequest,
  TransportError,
  type TransportErrorCode,
} from './transports/transport.js';
export {
  UploadError,
  type UploadErrorCode,
  Uploader,
  type UploaderOptions,
  type UploadReceipt,
} from './transports/upload.js';
