/**
 * What the policy language works on: a tool call, and an action pattern as parsed. Kept apart
 * from the parser (patterns.ts) so the matcher (call-match.ts) can name them without a cycle.
 */

import type { Glob } from '../../core/glob.js';
import type { PathArgument } from './paths.js';
import type { CommandPattern } from './shell-match.js';

/** A tool call as the policy sees it. `kind` is the AHP `tool.kind` hint; `cwd` anchors relative paths. */
export interface ActionCall {
  tool: string;
  input?: unknown;
  kind?: string;
  cwd?: string;
  /**
   * The directory the call itself ran in, when it differs from `cwd` (the anchor of relative
   * patterns): a shell command's relative paths start here.
   */
  base?: string;
  /**
   * Why what or where the call runs cannot be read from its record (a directory argument the
   * adapter could not read), when it cannot: the call is judged as an opaque shell command.
   */
  opaque?: string;
  /** The user's home directory and Tally's (`TALLY_HOME`), as the session recorded them: control-plane places. */
  home?: string;
  tallyHome?: string;
  /**
   * True for a call of a session whose signed start was recorded before the control plane was
   * judged (it names no home): the call is judged as it was when it ran, without the control plane.
   */
  beforeControlPlane?: boolean;
  /** Paths the boundary resolved through links (the record's `resolved`): shell targets are judged there too. */
  resolved?: readonly { path: string; resolved: string }[];
}

export interface ActionPattern {
  /** The pattern as written. */
  text: string;
  /** The tool name as written (a family wildcard keeps its trailing `*`). */
  name: string;
  /** For a family wildcard (`mcp__github__*`, `*`): the prefix; otherwise undefined. */
  family?: string;
  /** The canonical tool the name resolves to (not for families). */
  canonical?: string;
  /** The argument glob, compiled for each kind of argument. */
  argument?: {
    source: string;
    /** The argument as a glob over command text and URLs. */
    command: Glob;
    /** The argument as a path glob, exact and case-folded. */
    path: PathArgument;
    /** The argument read as one command (program, options, operands), when it is one. */
    shell?: CommandPattern;
    /** For `domain:host`: the host, normalised as URLs are. */
    domain?: string;
  };
}
