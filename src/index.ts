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
  TimeoutHold,
} from './mcp/connection.js';
export { type HostEvent, type HostOptions, McpHost, TACK_CLIENT_INFO } from './mcp/host.js';
export { assignToolNames, MAX_TOOL_NAME_LENGTH, sanitizeToolName } from './mcp/names.js';
export { DEFAULT_MAX_MESSAGE_BYTES, type TransportKind } from './mcp/transport.js';
export { type DocsServerOptions, type RunningDocsServer, startDocsServer } from './servers/docs/start.js';
export { type GatewayServeOptions, type RunningGateway, startGateway } from './servers/gateway/start.js';
export type { HttpOptions, Served } from './servers/serve.js';
export {
  type RunningSkillsServer,
  type SkillsServerOptions,
  startSkillsServer,
} from './servers/skills/start.js';
export {
  type DiscoveredSkill,
  type DiscoverOptions,
  type Discovery,
  discoverSkills,
  type SkillScope,
  scopeRoots,
} from './skills/discover.js';
export {
  type IndexOptions,
  type RemoteSkill,
  type RenderedIndex,
  type SkillEntry,
  SkillLibrary,
} from './skills/library.js';
export { type LoadSkillsOptions, loadSkills } from './skills/load.js';
export { SERVER_SKILL_SEPARATOR, serverSkills } from './skills/remote.js';
export {
  type ApproveScript,
  formatScriptResult,
  type RunScriptOptions,
  runSkillScript,
  type ScriptApprovalRequest,
  type ScriptResult,
} from './skills/scripts.js';
export { parseSkill, readSkill, SKILL_FILE, type SkillSource } from './skills/skill.js';
export {
  ACTIVATE_SKILL,
  READ_SKILL_FILE,
  RUN_SKILL_SCRIPT,
  type SkillToolsOptions,
  skillTools,
} from './skills/tools.js';
export {
  formatIssue as formatSkillIssue,
  type Severity,
  type SkillIssue,
  type SkillRule,
  type ValidateOptions,
  validatePaths,
  validateSkill,
} from './skills/validate.js';
export { type AuditEntry, AuditLog, type AuditOutcome } from './store/audit.js';
export { openDatabase } from './store/database.js';
export { EraCache, type EraVerdict } from './store/era-cache.js';
export { TackStore } from './store/store.js';
export { countTokens, toolDefinitionText, toolDefinitionTokens } from './tokens/count.js';
export type { NativeTool, NativeToolResult } from './tools/native.js';
export { VERSION } from './version.js';
