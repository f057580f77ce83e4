import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  cleanPath,
  compareCodeUnits,
  contentDigest,
  normalizePath,
  sessionWorkspace,
  sortedUnique,
  truncate,
} from '../../src/evidence/normalize.js';
import type { CanonicalEvent, EventRecord } from '../../src/evidence/record/record.js';

const FIXTURES = new URL('../../../../shared/ahp/fixtures/draft/http/', import.meta.url);

function fixtureEvent(name: string): CanonicalEvent {
  const message = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as {
    params: { event: CanonicalEvent };
  };
  return message.params.event;
}

function record(event: CanonicalEvent): EventRecord {
  return { v: 2, seq: 0, time: '2026-08-24T08:50:00.000Z', session: 's', source: 'ahp', event, prev: null };
}

describe('cleanPath', () => {
  it('removes ./, empty segments and resolves ..', () => {
    assert.equal(cleanPath('./a'), 'a');
    assert.equal(cleanPath('a//b'), 'a/b');
    assert.equal(cleanPath('a/../b'), 'b');
    assert.equal(cleanPath('a/b/'), 'a/b');
    assert.equal(cleanPath('a/./b/./c'), 'a/b/c');
  });

  it('turns Windows separators into POSIX ones and upper-cases the drive', () => {
    assert.equal(cleanPath('src\\lib\\x.ts'), 'src/lib/x.ts');
    assert.equal(cleanPath('c:\\Users\\dev\\repo'), 'C:/Users/dev/repo');
  });

  it('never climbs above an absolute root, keeps unresolved .. in a relative path', () => {
    assert.equal(cleanPath('/x/../../y'), '/y');
    assert.equal(cleanPath('../a/b'), '../a/b');
    assert.equal(cleanPath('a/../../b'), '../b');
    assert.equal(cleanPath('.'), '.');
  });
});

describe('normalizePath', () => {
  const frame = { root: '/repo', cwd: '/repo' };

  it('makes absolute paths under the root repo-relative', () => {
    assert.deepEqual(normalizePath('/repo/src/a.ts', frame), { path: 'src/a.ts', outside: false });
    assert.deepEqual(normalizePath('/repo', frame), { path: '.', outside: false });
  });

  it('gives the same path for every spelling of one file', () => {
    const spellings = [
      'src/a.ts',
      './src/a.ts',
      'src//a.ts',
      'src/x/../a.ts',
      'src\\a.ts',
      '/repo/./src/a.ts',
    ];
    for (const s of spellings)
      assert.deepEqual(normalizePath(s, frame), { path: 'src/a.ts', outside: false }, s);
  });

  it('keeps paths outside the root absolute and flags them', () => {
    assert.deepEqual(normalizePath('/etc/hosts', frame), { path: '/etc/hosts', outside: true });
    // A sibling directory sharing the root as a string prefix is not under it.
    assert.deepEqual(normalizePath('/repo2/a', frame), { path: '/repo2/a', outside: true });
    assert.deepEqual(normalizePath('../other/a', frame), { path: '/other/a', outside: true });
  });

  it("resolves relative paths against the event's cwd, else the session cwd", () => {
    const nested = { root: '/repo', cwd: '/repo/pkg' };
    assert.deepEqual(normalizePath('a.ts', nested), { path: 'pkg/a.ts', outside: false });
    assert.deepEqual(normalizePath('a.ts', nested, '/repo/tools'), { path: 'tools/a.ts', outside: false });
  });

  it('handles a Windows workspace', () => {
    const win = { root: cleanPath('C:\\work\\repo') };
    assert.deepEqual(normalizePath('c:\\work\\repo\\src\\a.ts', win), { path: 'src/a.ts', outside: false });
    assert.deepEqual(normalizePath('src\\a.ts', win), { path: 'src/a.ts', outside: false });
  });

  it('without a root: relative paths are cleaned, absolute ones kept and not flagged', () => {
    assert.deepEqual(normalizePath('./a//b', {}), { path: 'a/b', outside: false });
    assert.deepEqual(normalizePath('/abs/a', {}), { path: '/abs/a', outside: false });
    assert.equal(normalizePath('', {}), undefined);
  });
});

describe('sessionWorkspace', () => {
  it('reads the homes the start recorded; a start of Tally without them predates the control plane', () => {
    const event = fixtureEvent('observe-session-start.valid.json');
    event.extensions = {
      'dev.tally.workspace': { root: '/repo', home: '/home/u', tally_home: '/home/u/.tally' },
    };
    assert.deepEqual(sessionWorkspace([record(event)]).frame, {
      root: '/repo',
      cwd: '/repo',
      home: '/home/u',
      tallyHome: '/home/u/.tally',
    });
    event.extensions = { 'dev.tally.workspace': { root: '/repo' } };
    assert.equal(sessionWorkspace([record(event)]).frame.beforeControlPlane, true);
  });

  it('reads root and cwd from the AHP session.start fixture', () => {
    const ws = sessionWorkspace([record(fixtureEvent('observe-session-start.valid.json'))]);
    assert.deepEqual(ws.frame, { root: '/repo', cwd: '/repo' });
    assert.equal(ws.baselineDirty.size, 0);
  });

  it('prefers the dev.tally.workspace root and reads the baseline', () => {
    const event = fixtureEvent('observe-session-start.valid.json');
    const dirtyDigest = `sha256:${'1'.repeat(64)}`;
    event.session = { id: 'x', cwd: '/home/u/repo/pkg', workspaceRoots: ['/home/u/repo/pkg'] };
    event.extensions = {
      'dev.tally.workspace': {
        root: '/home/u/repo',
        baseline: { commit: 'abc123', dirty: { '/home/u/repo/notes.txt': dirtyDigest, 'gone.txt': null } },
      },
    };
    const ws = sessionWorkspace([record(event)]);
    // Tally's start that names no home is older than the control plane (docs/policy.md).
    assert.deepEqual(ws.frame, { root: '/home/u/repo', cwd: '/home/u/repo/pkg', beforeControlPlane: true });
    assert.equal(ws.baselineCommit, 'abc123');
    // Baseline paths are relative to the root (like git's), absolute ones are made so.
    assert.deepEqual([...ws.baselineDirty.entries()].sort(), [
      ['gone.txt', null],
      ['notes.txt', dirtyDigest],
    ]);
  });

  it('knows nothing when the session has no start event', () => {
    assert.deepEqual(sessionWorkspace([]).frame, {});
  });
});

describe('contentDigest', () => {
  it('hashes the inline text of a body part (file.changed fixture)', () => {
    const event = fixtureEvent('file-changed-inline.valid.json');
    const change = (event.changes as Record<string, unknown>[])[0]!;
    const expected = `sha256:${createHash('sha256').update('Hello, world!\n', 'utf8').digest('hex')}`;
    assert.equal(contentDigest(change.after), expected);
  });

  it('gives nothing for parts that do not carry the whole text', () => {
    assert.equal(
      contentDigest({ id: 'x', kind: 'text', mediaType: 'text/plain', selection: 'metadata' }),
      undefined,
    );
    assert.equal(
      contentDigest({ id: 'x', kind: 'attachment', selection: 'body', body: { ref: 'r' } }),
      undefined,
    );
    assert.equal(contentDigest(undefined), undefined);
  });
});

describe('ordering and truncation', () => {
  it('sorts by UTF-16 code units, not by locale', () => {
    assert.deepEqual(sortedUnique(['b', 'é', 'B', 'a', 'Z', 'a']), ['B', 'Z', 'a', 'b', 'é']);
    // U+FF5E (BMP) sorts after U+1F600 (surrogate pair D83D DE00) by code units, not by code point.
    assert.ok(compareCodeUnits('\u{1F600}', '\uFF5E') < 0);
  });

  it('never splits a surrogate pair', () => {
    const cut = truncate('ab\u{1F600}\u{1F600}cd', 4);
    assert.equal(cut, 'ab\u{1F600}…');
    assert.ok(cut.isWellFormed());
    assert.equal(truncate('short', 10), 'short');
  });
});
