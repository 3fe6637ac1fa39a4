/**
 * tack's library API, the root entry (`tack`): the host (MCP connections, the catalog, names), configuration, the
 * agent harness, the store, token counts and errors. Servers, knowledge, skills, security and search have their own
 * entries (`tack/servers`, `tack/knowledge`, `tack/skills`, `tack/security`, `tack/search`) so a program that
 * only hosts MCP servers does not read what it does not use. Names are listed one by one (no `export *`): the
 * public surface is a deliberate choice, and api/*.api.txt (checked by test/api.test.ts) shows every change to it.
 * Everything the CLI does is a call exported here or from a subpath entry (the same test checks the CLI's imports).
 */

export { type RunningAgent, type StartAgentOptions, secretMaskerFor, startAgent } from './agent/agent.js';
export {
  APPROVE_MODES,
  type ApprovalAnswer,
  ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalRequest,
  type ApproveMode,
  type Approver,
  type GatedTool,
} from './agent/approval.js';
export type { CodeModeOptions, CodeModeSetting } from './agent/code-mode.js';
export { estimateTokens } from './agent/compaction.js';
export { HARNESS_RULES, systemPrompt } from './agent/context.js';
export type { AgentEvent, DefinitionNotice, EndReason, SubagentEvent, Usage } from './agent/events.js';
export { fileAttachments } from './agent/file-mentions.js';
export { type Guidelines, type GuidelinesLayer, loadGuidelines } from './agent/guidelines.js';
export type { DefinitionReviewer } from './agent/held.js';
export { type HookResult, type HooksConfig, runHooks } from './agent/hooks.js';
export {
  type AgentInteraction,
  type ElicitationAnswer,
  type ElicitationQuestion,
  elicitationValue,
  INTERACTIVE_CAPABILITIES,
  interactionHandlers,
  type SamplingRequest,
} from './agent/interaction.js';
export { type ResolvedModel, resolveModel } from './agent/model.js';
export {
  type AgentOptions,
  type ApprovalOptions,
  type ContextOptions,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_LIMITS,
  type Limits,
  type ParentSession,
  type PinOptions,
  type ResumeOptions,
  type RunResult,
} from './agent/options.js';
export type { RunToolCall, ToolCallContext, ToolCallRequest, ToolCallResult } from './agent/pipeline.js';
export { costOf, DEFAULT_PRICES, type Price, priceOf } from './agent/prices.js';
export {
  type ProjectReview,
  type ReviewedHook,
  type ReviewedServer,
  type ReviewedSkill,
  type ReviewProjectOptions,
  reviewProject,
  trustReviewedProject,
} from './agent/project-review.js';
export { judgeCall } from './agent/scan-judge.js';
export { type SanitizedSchema, sanitizeSchema } from './agent/schema.js';
export { AgentSession } from './agent/session.js';
export { DeferredTools, type ToolSearchMode, type ToolSearchOptions } from './agent/tool-search.js';
export {
  type AgentTool,
  mcpAgentTools,
  mcpToolSecurity,
  type NativeSandboxes,
  nativeAgentTools,
  type ToolServerSettings,
  withSandboxFacts,
} from './agent/toolset.js';
export {
  openForResume,
  type ResumeState,
  readTranscript,
  resumeState,
  Transcript,
} from './agent/transcript.js';
export {
  BUILT_IN_COMMANDS,
  chatPromptCommands,
  isUserCommand,
  type PreparedTurn,
  prepareTurn,
  type SkillCommand,
  skillCommands,
  userCommandHelp,
} from './agent/user-turn.js';
export {
  applyProjectTrust,
  type HeldBack,
  invalidProjectFilesWarnings,
  type ProjectTrustState,
  projectSkillsTrusted,
  projectTrustScope,
  projectTrustWarning,
  resolveProjectTrust,
  untrustedReason,
} from './config/apply-trust.js';
export {
  type AddServerOptions,
  type AddServerResult,
  type AddServersOutcome,
  addServer,
  addServersTo,
  type ConfigTarget,
  configTarget,
  configTargets,
  type EditLocation,
  type EntryFromArgs,
  entryFromArgs,
  type ListedServerEntry,
  listServerEntries,
  type RemoveServerOptions,
  type RemoveServerResult,
  removeServer,
  SERVER_SCOPES,
  type ServerEntry,
  type ServerScope,
} from './config/edit.js';
export {
  type FindImportsOptions,
  type FoundServers,
  findImportableServers,
  IMPORT_SOURCES,
  type ImportCandidate,
  type ImportOutcome,
  type ImportSource,
  importServers,
  parseImportSources,
} from './config/import.js';
export { type InitFile, type InitProjectOptions, initProject, schemaReference } from './config/init.js';
export { configJsonSchema } from './config/json-schema.js';
export type {
  ConfigSource,
  ConfigWarning,
  HttpServerConfig,
  KnowledgeConfig,
  LoadConfigOptions,
  ProjectContributions,
  ServeConfig,
  ServerConfig,
  StdioServerConfig,
  TackConfig,
} from './config/load.js';
export { formatIssue, loadConfig, parseConfigText } from './config/load.js';
export { findProjectRoot, resolvePaths, type TackPaths } from './config/paths.js';
export {
  type Declared,
  type SandboxContext,
  type SandboxNetworkRule,
  type SandboxPathRule,
  type SandboxPolicy,
  SandboxResolver,
} from './config/sandbox.js';
export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  TackConfigFileSchema,
} from './config/schema.js';
export { addPermissionRule } from './config/user-rules.js';
export { type ErrorSubject, errorMessage, requirePackages, TackError, type TackErrorCode } from './errors.js';
export {
  MAX_ATTACHMENT_CHARS,
  MAX_ATTACHMENTS,
  MAX_PROMPT_TEXT_CHARS,
  resourceAttachment,
} from './mcp/attachments.js';
export { Catalog, type CatalogTool, type ServerListings } from './mcp/catalog.js';
export {
  type ConnectionStatus,
  DEFAULT_RESTART_POLICY,
  type RequestCallOptions,
  type RestartPolicy,
  ServerConnection,
  type ServerStatus,
} from './mcp/connection.js';
export { renderBlock, resultText } from './mcp/content.js';
export { type HostServerDefinitions, hostDefinitions, serverIdentity } from './mcp/definitions.js';
export { type HostEvent, type HostOptions, McpHost, TACK_CLIENT_INFO, unknownServer } from './mcp/host.js';
export { assignToolNames, MAX_TOOL_NAME_LENGTH, sanitizeToolName, serverOfToolName } from './mcp/names.js';
export { type OAuthLoginRequest, type OAuthOptions, oauthResource, TackOAuthProvider } from './mcp/oauth.js';
export {
  type ArgumentTarget,
  argumentAt,
  argumentWord,
  COMPLETION_TIMEOUT_MS,
  type CommandWord,
  checkPromptArguments,
  completePromptArgument,
  type ExpandedPrompt,
  expandPromptCommand,
  type HeldPromptCheck,
  type PromptCommand,
  parsePromptArguments,
  promptCommands,
  promptTurn,
  promptUsage,
  runPromptCommand,
  splitCommandWords,
} from './mcp/prompt-command.js';
export {
  completeResourceMention,
  findResourceMentions,
  type ResolvedMentions,
  type ResourceMention,
  resolveResourceMentions,
} from './mcp/resource-mention.js';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  type EnvSource,
  type StdioEnvironment,
  stdioEnvironment,
  type TransportKind,
} from './mcp/transport.js';
export { type AuditEntry, type AuditLog, type AuditOutcome, SqliteAuditLog } from './store/audit.js';
export type { EraCache, EraVerdict } from './store/era-cache.js';
export type {
  OAuthClientRecord,
  OAuthCredentials,
  OAuthTokenRecord,
} from './store/oauth-credentials.js';
export { openConfiguredStore, openStore, type StoreLocation } from './store/open.js';
export type { PinRecord, PinWrite } from './store/pins.js';
export { earlierSessions, type SessionIndex, type SessionRow, sessionSummary } from './store/sessions.js';
export { SqliteStore, type StoreEngine, TackStore } from './store/store.js';
export type { ToolExample } from './store/tool-examples.js';
export type { TrustedProject, TrustedProjects } from './store/trusted-projects.js';
export { OTLP_ENDPOINT_ENV, startTelemetry, type Telemetry } from './telemetry/start.js';
export {
  countTokens,
  countTokensMany,
  estimateTextTokens,
  type ModelToolDefinition,
  modelToolOf,
  TOOL_TOKENS_BASIS,
  type TokenCounting,
  tokenCounting,
  toolDefinitionsTokens,
  toolDefinitionText,
  toolDefinitionTokens,
} from './tokens/count.js';
export type {
  NativeTool,
  NativeToolContext,
  NativeToolResult,
  NativeToolTraits,
  ToolCapability,
  ToolCapabilityLabel,
} from './tools/native.js';
export {
  isSecretKey,
  MASK,
  maskSecrets,
  SecretMasker,
  type SecretMaskerOptions,
  secretValuesOf,
} from './util/secrets.js';
export type { TackWarning, TackWarningCode, WarningSink } from './util/warnings.js';
export { VERSION } from './version.js';
