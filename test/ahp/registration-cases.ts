/**
 * Shared helpers for the registration rule tests: the official valid portable fixture as a mutable
 * base, and assertions on the exact pointer and rule of a reported issue.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseRegistration, RegistrationError } from '../../src/ahp/registration/registration.js';
import type { Issue } from '../../src/ahp/registration/types.js';

export const PORTABLE = new URL(
  '../../../../shared/ahp/fixtures/draft/registration/portable.valid.json',
  import.meta.url,
);

// biome-ignore lint/suspicious/noExplicitAny: test mutations poke at arbitrary JSON
export type Doc = any;

export function portable(): Doc {
  return JSON.parse(readFileSync(PORTABLE, 'utf8'));
}

export function issuesOf(doc: unknown): Issue[] {
  try {
    parseRegistration(doc);
  } catch (error) {
    assert.ok(error instanceof RegistrationError);
    assert.equal(error.code, 'invalid');
    return error.issues;
  }
  assert.fail('the document was accepted');
}

export function expectIssue(mutate: (d: Doc) => void, pointer: string, rule: string): Issue[] {
  const doc = portable();
  mutate(doc);
  const issues = issuesOf(doc);
  assert.ok(
    issues.some((i) => i.pointer === pointer && i.rule === rule),
    `expected ${rule} at ${pointer}, got ${JSON.stringify(issues)}`,
  );
  return issues;
}

export function accepted(mutate: (d: Doc) => void) {
  const doc = portable();
  mutate(doc);
  return parseRegistration(doc);
}

export const H0 = '/hooks/0';
export const H1 = '/hooks/1';
export const S00 = '/hooks/0/subscriptions/0';
export const S11 = '/hooks/1/subscriptions/1';
