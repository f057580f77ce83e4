/**
 * Registration documents against the official fixtures and schema: every manifest case gets its
 * expectedValid, and wherever the official registration schema (run with Ajv 2020-12) rejects a
 * document, Tally rejects it too. Rule-by-rule cases live in registration-rules.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expandSelector } from '../../src/ahp/registration/events.js';
import {
  parseRegistration,
  parseRegistrationText,
  RegistrationError,
} from '../../src/ahp/registration/registration.js';
import { sha256Hex } from '../../src/core/hash.js';

const AHP = new URL('../../../../shared/ahp/', import.meta.url);
const SCHEMAS = new URL('schema/draft/', AHP);

interface ManifestCase {
  id: string;
  path: string;
  binding: string;
  schema: string;
  expectedValid: boolean;
  sha256: string;
}

const manifest = JSON.parse(readFileSync(new URL('fixtures/draft/manifest.json', AHP), 'utf8')) as {
  cases: ManifestCase[];
};
const registrationCases = manifest.cases.filter((c) => c.binding === 'registration-json');

function loadSchemaValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  for (const name of readdirSync(SCHEMAS).filter((n) => n.endsWith('.schema.json') || n === 'schema.json')) {
    const schema = JSON.parse(readFileSync(new URL(name, SCHEMAS), 'utf8')) as { $id: string };
    if (!ajv.getSchema(schema.$id)) ajv.addSchema(schema);
  }
  const validate = ajv.getSchema('https://agenthooksprotocol.org/schemas/draft/registration.schema.json');
  assert.ok(validate, 'the official registration schema is loaded');
  return validate;
}
const schemaValidates = loadSchemaValidator();

function tallyAccepts(doc: unknown): boolean {
  try {
    parseRegistration(doc);
    return true;
  } catch (error) {
    if (error instanceof RegistrationError) return false;
    throw error;
  }
}

test('the manifest lists registration fixtures', () => {
  assert.ok(registrationCases.length >= 6, `found ${registrationCases.length}`);
  assert.ok(registrationCases.some((c) => c.expectedValid));
  assert.ok(registrationCases.some((c) => !c.expectedValid));
});

for (const c of registrationCases) {
  test(`fixture ${c.id} is ${c.expectedValid ? 'valid' : 'invalid'}`, (t) => {
    const path = new URL(c.path, AHP);
    if (!existsSync(path)) {
      // The corpus lacks this one file; its rule is covered by the rule tests instead.
      t.skip(`${c.path} is not in the corpus`);
      return;
    }
    const bytes = readFileSync(path);
    assert.equal(sha256Hex(bytes), c.sha256, 'fixture bytes match the manifest hash');
    let accepted: boolean;
    let issues: unknown = [];
    try {
      parseRegistrationText(bytes);
      accepted = true;
    } catch (error) {
      assert.ok(error instanceof RegistrationError, String(error));
      assert.equal(error.code, 'invalid', 'fixtures are well-formed JSON');
      assert.ok(error.issues.length > 0);
      for (const issue of error.issues) assert.ok(issue.pointer === '' || issue.pointer.startsWith('/'));
      issues = error.issues;
      accepted = false;
    }
    assert.equal(accepted, c.expectedValid, JSON.stringify(issues));
    const doc = JSON.parse(bytes.toString('utf8'));
    assert.equal(schemaValidates(doc), c.expectedValid, 'the oracle schema agrees with the manifest');
  });
}

test('the missing literal-token fixture is rebuilt from its manifest description and rejected by both', () => {
  const doc = portable();
  doc.hooks[0].authentication = { type: 'bearer', token: 'literal-secret-value' };
  assert.equal(schemaValidates(doc), false);
  assert.equal(tallyAccepts(doc), false);
});

/** The valid portable fixture, freshly parsed, as a mutable base for the cross-check mutations. */
// biome-ignore lint/suspicious/noExplicitAny: test mutations poke at arbitrary JSON
function portable(): any {
  return JSON.parse(readFileSync(new URL('fixtures/draft/registration/portable.valid.json', AHP), 'utf8'));
}

// biome-ignore lint/suspicious/noExplicitAny: test mutations poke at arbitrary JSON
const MUTATIONS: Record<string, (d: any) => void> = {
  'protocolVersion 0.1': (d) => {
    d.protocolVersion = '0.1';
  },
  'no hooks': (d) => {
    d.hooks = undefined;
  },
  'id not reverse-DNS': (d) => {
    d.hooks[0].id = 'policy';
  },
  'id starting with a digit': (d) => {
    d.hooks[0].id = '1com.example';
  },
  'no transport': (d) => {
    delete d.hooks[0].transport;
  },
  'websocket transport': (d) => {
    d.hooks[0].transport = { type: 'websocket', url: 'wss://x.example/' };
  },
  'relative url': (d) => {
    d.hooks[0].transport.url = '/agent-hooks';
  },
  'stdio without lifecycle': (d) => {
    delete d.hooks[1].transport.lifecycle;
  },
  'stdio empty command': (d) => {
    d.hooks[1].transport.command = '';
  },
  'stdio args not strings': (d) => {
    d.hooks[1].transport.args = [1];
  },
  'authentication on stdio': (d) => {
    d.hooks[1].authentication = { type: 'bearer', tokenEnv: 'X' };
  },
  'tokenEnv and tokenRef': (d) => {
    d.hooks[0].authentication.tokenRef = 'secrets/policy';
  },
  'bad tokenEnv name': (d) => {
    d.hooks[0].authentication.tokenEnv = 'AHP-TOKEN';
  },
  'mtls authentication': (d) => {
    d.hooks[0].authentication = { type: 'mtls', certificateRef: 'c', privateKeyRef: 'k', trustRootsRef: 't' };
  },
  'empty subscriptions': (d) => {
    d.hooks[0].subscriptions = [];
  },
  'arbitrary pattern': (d) => {
    d.hooks[0].subscriptions[0].events = ['tool.before*'];
  },
  'duplicate selector': (d) => {
    d.hooks[0].subscriptions[0].events = ['tool.before', 'tool.before'];
  },
  'intercept turn.end': (d) => {
    d.hooks[0].subscriptions[0].events = ['turn.end'];
  },
  'observe with failurePolicy': (d) => {
    d.hooks[1].subscriptions[1].failurePolicy = 'fail-open';
  },
  'intercept without timeoutMs': (d) => {
    delete d.hooks[0].subscriptions[0].timeoutMs;
  },
  'intercept timeoutMs 0': (d) => {
    d.hooks[0].subscriptions[0].timeoutMs = 0;
  },
  'mode both': (d) => {
    d.hooks[0].subscriptions[0].mode = 'both';
  },
  'content category full': (d) => {
    d.hooks[0].subscriptions[0].content.text = 'full';
  },
  'includeNative string': (d) => {
    d.hooks[0].subscriptions[0].includeNative = 'yes';
  },
  'upload without maxBytes': (d) => {
    d.hooks[0].subscriptions[0].upload = { endpoint: 'https://u.example/bytes', timeoutMs: 5000 };
  },
  'upload over plain http': (d) => {
    d.hooks[0].subscriptions[0].upload = { endpoint: 'http://u.example/b', timeoutMs: 5000, maxBytes: 10 };
  },
  'legacy contentReceiver': (d) => {
    d.hooks[0].contentReceiver = { url: 'https://r.example/', timeoutMs: 1, maxBytes: 1 };
  },
  'managed scope still disableable': (d) => {
    d.hooks[0].subscriptions[0].scope = 'managed';
  },
};

for (const [name, mutate] of Object.entries(MUTATIONS)) {
  test(`oracle cross-check: ${name} is rejected by the official schema and by Tally`, () => {
    const doc = portable();
    mutate(doc);
    assert.equal(schemaValidates(doc), false, 'the mutation is one the official schema rejects');
    assert.equal(tallyAccepts(doc), false);
  });
}

test('the intercept and observe event lists match the official schema enums', () => {
  const schema = JSON.parse(readFileSync(new URL('registration.schema.json', SCHEMAS), 'utf8'));
  const names = (def: string): string[] => schema.$defs[def].properties.events.items.anyOf[0].enum;
  const intercept = names('interceptSubscription');
  const observe = names('observeSubscription');
  assert.equal(intercept.length, 19);
  assert.equal(observe.length, 32);
  assert.deepEqual([...expandSelector('*', 'intercept')].sort(), [...intercept].sort());
  assert.deepEqual([...expandSelector('*', 'observe')].sort(), [...observe].sort());
  // A family wildcard in intercept mode keeps only that family's interceptable members.
  assert.deepEqual(
    [...expandSelector('model.*', 'intercept')].sort(),
    intercept.filter((e) => e.startsWith('model.')).sort(),
  );
  assert.deepEqual(expandSelector('turn.end', 'intercept'), []);
  assert.deepEqual(expandSelector('turn.end', 'observe'), ['turn.end']);
});
