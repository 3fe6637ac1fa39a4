/**
 * tack's library API, the root entry (`tack`): configuration, the MCP host and its catalog, the agent harness, the
 * store, token counts, telemetry and errors: what a program that hosts MCP servers or runs an agent needs. Servers,
 * knowledge, skills, security, search, the console and the terminal chat have their own entries (`tack/servers`,
 * `tack/knowledge`, `tack/skills`, `tack/security`, `tack/search`, `tack/console`, `tack/tui`), so a program reads
 * only what it uses. Names are listed one by one (no `export *`): the public surface is a deliberate choice,
 * api/*.api.txt shows every change to it, and test/api.test.ts fails on a name docs/library.md or examples/ do not
 * show. The CLI is a client of the layers, not of this file: what it needs is not public for that reason.
 */

export { type RunningAgent, type StartAgentOptions, startAgent } from './agent/agent.js';
export type { ApprovalAnswer, ApprovalRequest, ApproveMode, Approver } from './agent/approval.js';
export type { AgentEvent, EndReason, Usage } from './agent/events.js';
export type {
  AgentInteraction,
  ElicitationAnswer,
  ElicitationQuestion,
  SamplingRequest,
} from './agent/interaction.js';
export { type ResolvedModel, resolveModel } from './agent/model.js';
export type { AgentOptions, Limits, RunResult } from './agent/options.js';
export type { RebuiltBody } from './agent/request-record.js';
export { AgentSession } from './agent/session.js';
export {
  type RebuiltStep,
  type RequestPart,
  readSessionSteps,
  rebuildStepRequest,
  type StepRequest,
} from './agent/session-requests.js';
export type {
  ConfigWarning,
  HttpServerConfig,
  LoadConfigOptions,
  ServerConfig,
  StdioServerConfig,
  TackConfig,
} from './config/load.js';
export { loadConfig } from './config/load.js';
export { type ErrorSubject, errorMessage, TackError, type TackErrorCode } from './errors.js';
export type { Catalog, CatalogTool } from './mcp/catalog.js';
export type {
  ConnectionStatus,
  RequestCallOptions,
  RestartPolicy,
  ServerConnection,
  ServerStatus,
} from './mcp/connection.js';
export { type HostEvent, type HostOptions, McpHost } from './mcp/host.js';
export type { ResolvedPackage } from './mcp/package-resolve.js';
export { type PackageRunner, type PackageRunnerSpec, packageRunnerSpec } from './mcp/package-runner.js';
export { openStore, type StoreLocation } from './store/open.js';
export { TackStore } from './store/store.js';
export { startTelemetry, type Telemetry } from './telemetry/start.js';
export { countTokens, type ModelToolDefinition, toolDefinitionTokens } from './tokens/count.js';
export type { NativeTool, NativeToolContext, NativeToolResult } from './tools/native.js';
export type { TackWarning, TackWarningCode, WarningSink } from './util/warnings.js';
export { VERSION } from './version.js';
