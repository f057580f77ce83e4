/**
 * A `tool.kind` hint on an MCP tool (the gateway's, from the tool's input schema) widens what the
 * call is judged as when its name and input say nothing, and never narrows a call its input shows
 * to be a shell. Oracle: docs/policy.md "Tools by kind" and the certificate's forbid patterns.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evaluateAction } from '../../../src/evidence/policy/patterns.js';

const policy = { allow: ['mcp__x__*'], forbid: ['Bash(rm -rf *)', 'Read(.env)'], escalate: [] };

describe('MCP tool kind hints', () => {
  test('a hint makes a tool whose name says nothing judged as its kind', () => {
    const call = { tool: 'mcp__x__do', input: { command: 'rm -rf /tmp/x' }, cwd: '/repo' };
    assert.equal(evaluateAction(policy, call).verdict, 'allowed');
    assert.equal(evaluateAction(policy, { ...call, kind: 'shell' }).verdict, 'forbidden');
  });

  test('a hint never narrows: a shell call stays a shell whatever its hint says', () => {
    const call = { tool: 'mcp__x__run_command', input: { command: 'rm -rf /tmp/x' }, cwd: '/repo' };
    assert.equal(evaluateAction(policy, { ...call, kind: 'file_read' }).verdict, 'forbidden');
    assert.equal(evaluateAction(policy, { ...call, kind: 'mcp' }).verdict, 'forbidden');
  });
});
