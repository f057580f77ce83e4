/**
 * The AHP canonical event as every layer sees it: at least `id`, `type`, `time`, `source`; every
 * other field kept as received, unknown ones included. It lives in core because both the evidence
 * layer (records) and the AHP layer (dispatch) speak it and neither may import the other.
 */
export type CanonicalEvent = { id: string; type: string; time: string; source: string } & Record<
  string,
  unknown
>;
