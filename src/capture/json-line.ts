/** One line of an agent's own JSON-lines file (a transcript, a rollout): an object, or undefined. */
import { isJsonObject, type JsonObject } from '../core/json.js';

export function jsonLine(line: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
