/**
 * The AHP `tool.kind` hint for a tool a channel learned from the tool's own description (the MCP
 * gateway reads each tool's input schema from `tools/list`): the policy's kind inference run once,
 * here, so a channel never needs the evidence layer and the judge and the receipt read the same
 * kind from the record.
 */
import type { ToolKind } from '../evidence/policy/aliases.js';
import { inferToolKindFromSchema, READ_ARGUMENTS } from '../evidence/policy/kinds.js';

export { READ_ARGUMENTS };

const AHP_KIND: Partial<Record<ToolKind, string>> = {
  shell: 'shell',
  read: 'file_read',
  write: 'file_write',
  edit: 'file_edit',
  delete: 'file_delete',
  search: 'search',
  list: 'list',
  fetch: 'fetch',
};

/** The AHP kind a tool's name and input schema suggest, or undefined when they suggest none. */
export function toolKindHint(name: string, inputSchema: unknown): string | undefined {
  return AHP_KIND[inferToolKindFromSchema(name, inputSchema)];
}
