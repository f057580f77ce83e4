/** The MCP gateway: a transparent stdio relay whose `tools/call` requests are decided at the boundary. */
export {
  afterEvent,
  beforeEvent,
  MCP_EXTENSION,
  MCP_SOURCE,
  type McpServerIdentity,
  qualifiedName,
} from './events.js';
export { type GatewayExit, type GatewayOptions, McpGatewayError, runGateway } from './gateway.js';
export { deniedResult, type GatewaySink, type GatewayVerdict, McpRelay, protocolError } from './relay.js';
export { boundarySink, denialText, verdictOf } from './sink.js';
