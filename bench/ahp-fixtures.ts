/** What the AHP benchmarks share: one fail-closed intercept subscription on `tool.before`. */
import type { Subscription } from '../src/ahp/registration/types.js';

export function interceptSubscription(): Subscription {
  return {
    index: 0,
    events: ['tool.before'],
    mode: 'intercept',
    timeoutMs: 5000,
    failurePolicy: 'fail-closed',
    content: { default: 'body', categories: {} },
    includeNative: false,
  };
}
