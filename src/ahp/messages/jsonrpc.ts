/**
 * JSON-RPC 2.0 envelopes (request, notification, success and error response; no batches) and the
 * six AHP wire messages built on them.
 */
import { isJsonObject } from '../../core/json.js';
import { catalogueEntry } from '../protocol/catalogue.js';
import { SUPPORTED_PROTOCOL_VERSION } from '../registration/types.js';
import { capabilitiesFor } from './capability-rules.js';
import { effectCheck } from './effects.js';
import { extensions } from './event-parts.js';
import { eventCheck } from './events.js';
import { manifest } from './manifest.js';
import {
  anyObject,
  anyValue,
  arr,
  type Check,
  constant,
  issue,
  nonEmpty,
  obj,
  oneOfValues,
  type Props,
  str,
} from './shape.js';

const protocolVersion: Check = (value, pointer, out) => {
  if (value !== SUPPORTED_PROTOCOL_VERSION) {
    issue(
      out,
      pointer,
      'protocol-version',
      `unsupported protocol version ${JSON.stringify(value) ?? '(none)'}: Tally speaks "${SUPPORTED_PROTOCOL_VERSION}"`,
    );
  }
};

const requestId: Check = (value, pointer, out) => {
  if (typeof value === 'string' && value.length > 0) return;
  if (typeof value === 'number' && Number.isInteger(value)) return;
  issue(out, pointer, 'rpc.id', 'a request id must be a non-empty string or an integer');
};

const responseId: Check = (value, pointer, out) => {
  if (value !== null) requestId(value, pointer, out);
};

const jsonrpc = constant('2.0');

function request(method: string, params: Check): Check {
  return obj(
    { jsonrpc, id: requestId, method: constant(method), params },
    { required: ['jsonrpc', 'id', 'method', 'params'] },
  );
}

function notification(method: string, params: Check): Check {
  return obj(
    { jsonrpc, method: constant(method), params },
    {
      required: ['jsonrpc', 'method', 'params'],
      also: (value, pointer, out) => {
        if ('id' in value)
          issue(
            out,
            `${pointer}/id`,
            'rpc.notification-id',
            'a notification must not carry an id (it never gets a response)',
          );
      },
    },
  );
}

function success(result: Check): Check {
  return obj(
    { jsonrpc, id: responseId, result },
    { required: ['jsonrpc', 'id', 'result'], forbidden: ['error'] },
  );
}

export const errorResponse: Check = obj(
  {
    jsonrpc,
    id: responseId,
    error: obj(
      {
        code: (v, p, o) => (Number.isInteger(v) ? undefined : issue(o, p, 'type', 'must be an integer')),
        message: str(),
        data: anyValue,
      },
      { required: ['code', 'message'] },
    ),
  },
  { required: ['jsonrpc', 'id', 'error'], forbidden: ['result'] },
);

const interceptEvent: Check = (value, pointer, out) => {
  eventCheck(value, pointer, out);
  if (isJsonObject(value) && typeof value.type === 'string') {
    const entry = catalogueEntry(value.type);
    if (entry && !entry.interceptable) {
      issue(
        out,
        `${pointer}/type`,
        'event.not-interceptable',
        `${value.type} is observe-only and cannot be sent with hooks/intercept`,
      );
    }
  }
};

const state: Check = obj(
  {
    permission: oneOfValues(['none', 'allow', 'ask', 'deny']),
    candidate: (value, pointer, out) => {
      if (value !== null)
        obj({ value: anyValue, provenance: anyObject }, { required: ['value'] })(value, pointer, out);
    },
    flow: oneOfValues(['none', 'stop', 'continue']),
    instructions: arr(nonEmpty),
    injections: arr(anyValue),
  },
  { required: ['permission', 'candidate'] },
);

function interceptParamsFor(eventType: unknown): Check {
  const props: Props = {
    protocolVersion,
    event: interceptEvent,
    capabilities: capabilitiesFor(eventType),
    extensions,
    state,
  };
  return obj(props, { required: ['protocolVersion', 'event', 'capabilities'] });
}

/** Params checkers built once per catalogue event type (any other type gets a fresh one). */
const paramsByType = new Map<string, Check>();

const interceptParams: Check = (value, pointer, out) => {
  const eventType = isJsonObject(value) && isJsonObject(value.event) ? value.event.type : undefined;
  let check = typeof eventType === 'string' ? paramsByType.get(eventType) : undefined;
  if (check === undefined) {
    check = interceptParamsFor(eventType);
    if (typeof eventType === 'string' && catalogueEntry(eventType)) paramsByType.set(eventType, check);
  }
  check(value, pointer, out);
};

/** The JSON-RPC id of an intercept request must equal its event id (a retry reuses both). */
function idMatchesEvent(value: Record<string, unknown>, pointer: string, out: Parameters<Check>[2]): void {
  const event = isJsonObject(value.params) ? value.params.event : undefined;
  if (!isJsonObject(event) || !('id' in value) || !('id' in event)) return;
  if (value.id !== event.id) {
    issue(
      out,
      `${pointer}/id`,
      'rpc.id-mismatch',
      `request id ${JSON.stringify(value.id)} must equal params.event.id ${JSON.stringify(event.id)}`,
    );
  }
}

const interceptEnvelope: Check = request('hooks/intercept', interceptParams);

export const interceptRequest: Check = (value, pointer, out) => {
  interceptEnvelope(value, pointer, out);
  if (isJsonObject(value)) idMatchesEvent(value, pointer, out);
};

export const observeNotification: Check = notification(
  'hooks/observe',
  obj({ protocolVersion, event: eventCheck }, { required: ['protocolVersion', 'event'] }),
);

export const capabilitiesRequest: Check = request(
  'hooks/capabilities',
  obj({ protocolVersion }, { required: ['protocolVersion'], closed: true }),
);

export const capabilitiesResponse: Check = success(
  obj({ protocolVersion, manifest }, { required: ['protocolVersion', 'manifest'], forbidden: ['effects'] }),
);

export const interceptResponse: Check = success(
  obj(
    { protocolVersion, effects: arr(effectCheck), extensions },
    { required: ['protocolVersion', 'effects'], forbidden: ['manifest'] },
  ),
);

/** Any JSON-RPC 2.0 message, without AHP method rules (json-rpc-message). */
export const anyJsonRpc: Check = (value, pointer, out) => {
  if (!isJsonObject(value))
    return issue(out, pointer, 'type', 'a JSON-RPC message must be an object (batches are not allowed)');
  if ('method' in value) {
    const check =
      'id' in value
        ? obj(
            { jsonrpc, id: requestId, method: nonEmpty, params: anyObject },
            { required: ['jsonrpc', 'id', 'method', 'params'] },
          )
        : obj(
            { jsonrpc, method: nonEmpty, params: anyObject },
            { required: ['jsonrpc', 'method', 'params'] },
          );
    return check(value, pointer, out);
  }
  if ('error' in value) return errorResponse(value, pointer, out);
  success(anyObject)(value, pointer, out);
};
