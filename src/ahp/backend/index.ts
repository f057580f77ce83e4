/**
 * The AHP backend kit (`tally/backend`): write a policy backend as one handler and serve it over
 * HTTP or stdio, every message validated both ways; the rule-file policy; receiver-side lineage.
 */
// Backend side: the kit and the rule-file policy.
export {
  type BackendHandler,
  type BackendKit,
  type BackendOptions,
  BackendUnavailable,
  type Capabilities,
  createBackend,
  type Effect,
  type InterceptContext,
} from './kit.js';
// Receiver-side task/workspace lineage (the backend kit's `lineage` option).
export {
  type LineageOptions,
  LineageTracker,
  MAX_LINEAGE_EVENTS_PER_SOURCE,
  MAX_LINEAGE_SOURCES,
} from './lineage.js';
export {
  evaluateRules,
  parseRules,
  type Rule,
  type RuleEffect,
  RulesError,
  type RulesErrorCode,
  rulesHandler,
  rulesManifest,
} from './rules.js';
