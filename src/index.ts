/**
 * tack's library API. Everything the CLI does is a call here. Names are listed one by one (no `export *`),
 * so the public surface is a deliberate choice.
 */

export { configJsonSchema } from './config/json-schema.js';
export type {
  ConfigSource,
  ConfigWarning,
  HttpServerConfig,
  LoadConfigOptions,
  ServerConfig,
  StdioServerConfig,
  TackConfig,
} from './config/load.js';
export { formatIssue, loadConfig, parseConfigText } from './config/load.js';
export { findProjectRoot, resolvePaths, type TackPaths } from './config/paths.js';
export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  TackConfigFileSchema,
} from './config/schema.js';
export { type ErrorSubject, TackError, type TackErrorCode } from './errors.js';
export { Catalog, type CatalogTool, type ServerListings } from './mcp/catalog.js';
export {
  type ConnectionStatus,
  DEFAULT_RESTART_POLICY,
  type RequestCallOptions,
  type RestartPolicy,
  ServerConnection,
  type ServerStatus,
} from './mcp/connection.js';
export { type HostEvent, type HostOptions, McpHost, TACK_CLIENT_INFO } from './mcp/host.js';
export { assignToolNames, MAX_TOOL_NAME_LENGTH, sanitizeToolName } from './mcp/names.js';
export { DEFAULT_MAX_MESSAGE_BYTES, type TransportKind } from './mcp/transport.js';
export { type AuditEntry, AuditLog, type AuditOutcome } from './store/audit.js';
export { openDatabase } from './store/database.js';
export { EraCache, type EraVerdict } from './store/era-cache.js';
export { TackStore } from './store/store.js';
export { countTokens, toolDefinitionText, toolDefinitionTokens } from './tokens/count.js';
export { VERSION } from './version.js';
