/**
 * tack's library API. Everything the CLI does is a call here. Names are listed one by one (no `export *`),
 * so the public surface is a deliberate choice.
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
export { HARNESS_RULES } from './agent/context.js';
export type { AgentEvent, DefinitionNotice, EndReason, SubagentEvent, Usage } from './agent/events.js';
export { type Guidelines, type GuidelinesLayer, loadGuidelines } from './agent/guidelines.js';
export type { DefinitionReviewer } from './agent/held.js';
export { type HookResult, type HooksConfig, runHooks } from './agent/hooks.js';
export {
  type AgentInteraction,
  type ElicitationAnswer,
  type ElicitationQuestion,
  INTERACTIVE_CAPABILITIES,
  interactionHandlers,
  type SamplingRequest,
} from './agent/interaction.js';
export { type ResolvedModel, resolveModel } from './agent/model.js';
export {
  type AgentOptions,
  type ApprovalOptions,
  type ContextOptions,
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
export { configJsonSchema } from './config/json-schema.js';
export type {
  ConfigSource,
  ConfigWarning,
  HttpServerConfig,
  LoadConfigOptions,
  ProjectContributions,
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
export {
  applyProjectTrust,
  type HeldBack,
  type ProjectTrustState,
  projectSkillsTrusted,
  projectTrustScope,
  projectTrustWarning,
  resolveProjectTrust,
  untrustedReason,
} from './config/trust.js';
export { addPermissionRule } from './config/user-rules.js';
export { type ErrorSubject, TackError, type TackErrorCode } from './errors.js';
export {
  type AttestInput,
  type ComputationAttester,
  sameValue,
  sqlEqualityAttester,
  type Verdict,
} from './knowledge/attest/attesters.js';
export {
  type ComputationExecutor,
  type ExecuteRequest,
  type Receipt,
  ReceiptLog,
} from './knowledge/attest/executors.js';
export { checkParameters, type ParameterType, type ParameterValue } from './knowledge/attest/parameters.js';
export { type PostgresExecutorOptions, postgresExecutor } from './knowledge/attest/postgres.js';
export {
  type AttestedOutcome,
  type AttestOptions,
  attest,
  type ComputationOutcome,
  formatOutcome,
  type LoadedComputation,
  loadComputation,
  type RefusedOutcome,
  type RunComputationOptions,
  requireAttested,
  runComputation,
} from './knowledge/attest/run.js';
export { bindParameters, canonicalSql } from './knowledge/attest/sql.js';
export { type SqliteExecutorOptions, sqliteExecutor } from './knowledge/attest/sqlite.js';
export {
  type Edge,
  type EdgeKind,
  KnowledgeBundle,
  type LoadBundleOptions,
  loadBundle,
} from './knowledge/bundle.js';
export type { ComputationContract, ComputationParameter } from './knowledge/computation.js';
export {
  type Actor,
  type Concept,
  type ConceptSource,
  type ConceptStatus,
  isStale,
  parseConcept,
} from './knowledge/concept.js';
export { recordVerification, setFrontMatter } from './knowledge/edit.js';
export {
  GENERATED_TYPE,
  GENERATOR_ACTOR,
  type GenerateOptions,
  type GenerateResult,
  generateBundle,
} from './knowledge/generate.js';
export {
  type GraphFormat,
  type GraphJson,
  type GraphOptions,
  graphJson,
  renderGraph,
} from './knowledge/graph.js';
export {
  applyIndexPlan,
  GENERATED_BEGIN,
  GENERATED_END,
  type IndexFilePlan,
  type IndexPlan,
  planIndexes,
  writeIndexes,
} from './knowledge/index-file.js';
export { formatKnowledgeIssue, type KnowledgeIssue } from './knowledge/issues.js';
export {
  KnowledgeBase,
  type KnowledgeHit,
  type SearchOptions as KnowledgeSearchOptions,
} from './knowledge/knowledge.js';
export { conceptUri, renderConcept } from './knowledge/render.js';
export {
  type ComputationRuntimes,
  computationTool,
  openRuntimes,
  RUN_COMPUTATION,
  type RuntimeSettings,
} from './knowledge/runtimes.js';
export { parseTimeValue, type TimeForm, type TimeValue } from './knowledge/time.js';
export { knowledgeTools, READ_CONCEPT, SEARCH_KNOWLEDGE } from './knowledge/tools.js';
export { type TrustTier, trustTier } from './knowledge/trust.js';
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
export { type HostServerDefinitions, hostDefinitions, serverIdentity } from './mcp/definitions.js';
export { type HostEvent, type HostOptions, McpHost, TACK_CLIENT_INFO } from './mcp/host.js';
export { assignToolNames, MAX_TOOL_NAME_LENGTH, sanitizeToolName } from './mcp/names.js';
export { type OAuthLoginRequest, type OAuthOptions, oauthResource, TackOAuthProvider } from './mcp/oauth.js';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  type EnvSource,
  type StdioEnvironment,
  stdioEnvironment,
  type TransportKind,
} from './mcp/transport.js';
export { explainLine, explainPath, type Refusal } from './sandbox/explain.js';
export type { SandboxGuarantees } from './sandbox/guarantees.js';
export {
  describeStatus,
  expectedGuarantees,
  type Launch,
  type LaunchSpec,
  prepareLaunch,
  type SandboxStatus,
  sandboxEnvironment,
} from './sandbox/launch.js';
export { accessOf, bwrapArgs, type Mount, type MountPlan, planMounts } from './sandbox/mounts.js';
export { type CheckReport, type CheckRow, checkSandbox } from './sandbox/probe.js';
export { type EgressProxy, type ProxyDecision, startEgressProxy } from './sandbox/proxy.js';
export { type SandboxSupport, sandboxSupport } from './sandbox/support.js';
export {
  compareRetrieval,
  contextCost,
  evaluate,
  loadQueriesFile,
  loadToolsFile,
  type RetrievalMetrics,
  type RetrievalQuery,
} from './search/bench.js';
export { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from './search/meta-tools.js';
export {
  BaselineToolIndex,
  type SearchableTool,
  type ToolHit,
  ToolSearchIndex,
} from './search/tool-index.js';
export {
  applySandbox,
  CAPABILITIES,
  type Capability,
  type CapabilityLabel,
  hasCapability,
  type LabelOptions,
  type LabelSource,
  labelTool,
  type SandboxedLabels,
  type SandboxFacts,
  trifectaLegs,
} from './security/capabilities.js';
export {
  acceptPins,
  DefinitionGuard,
  type GuardReview,
  type HeldDefinition,
  type PinKind,
  pinDiff,
  type ServerDefinitions,
  toolPinDefinition,
} from './security/pins.js';
export {
  type CheckTrustOptions,
  checkProjectTrust,
  compareProjectFiles,
  type FileChange,
  listTrustedProjects,
  type ProjectFiles,
  type ProjectTrustScope,
  type ProjectTrustVerdict,
  projectFiles,
  projectSkillRoots,
  recordProjectFiles,
  recordProjectTrust,
  revokeProjectTrust,
  TRUST_BOUNDS,
  TRUST_PROJECT_ENV,
  type TrustRecords,
  trustedByEnvironment,
} from './security/project-trust.js';
export {
  type PermissionRules,
  type RuleAction,
  type RuleMatch,
  RuleSet,
  ruleProblem,
} from './security/rules.js';
export {
  decodeTags,
  type Finding,
  type FindingCode,
  type FindingSeverity,
  type ScanLocation,
  type ScanVerdict,
  scanText,
  scanTool,
  type ToolScan,
} from './security/scan.js';
export { type DocsServerOptions, type RunningDocsServer, startDocsServer } from './servers/docs/start.js';
export { type GatewayServeOptions, type RunningGateway, startGateway } from './servers/gateway/start.js';
export { KNOWLEDGE_SERVER, knowledgeServerConfig } from './servers/knowledge/entry.js';
export { type KnowledgeServerOptions, startKnowledgeServer } from './servers/knowledge/start.js';
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
export type { AuditEntry, AuditLog, AuditOutcome } from './store/audit.js';
export { openDatabase } from './store/database.js';
export type { EraCache, EraVerdict } from './store/era-cache.js';
export type { OAuthClientRecord, OAuthCredentials, OAuthTokenRecord } from './store/oauth-credentials.js';
export { openConfiguredStore, openStore, type StoreLocation } from './store/open.js';
export type { PinRecord, PinRecords, PinWrite } from './store/pins.js';
export { SqliteStore, type StoreEngine, TackStore } from './store/store.js';
export type { TrustedProject, TrustedProjects } from './store/trusted-projects.js';
export {
  countTokens,
  type ModelToolDefinition,
  modelToolOf,
  TOOL_TOKENS_BASIS,
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
