/**
 * `tack/security`: capability labels and the lethal-trifecta legs, pins of tool definitions, project trust,
 * permission rules, the poisoning scanner, and the sandbox servers and scripts run in.
 */

export { explainLine, explainPath, type Refusal } from '../sandbox/explain.js';
export type { ExposedPath, SandboxGuarantees } from '../sandbox/guarantees.js';
export {
  describeStatus,
  expectedGuarantees,
  type Launch,
  type LaunchSpec,
  prepareLaunch,
  type SandboxStatus,
  sandboxEnvironment,
} from '../sandbox/launch.js';
export { type CheckReport, type CheckRow, checkSandbox } from '../sandbox/probe.js';
export { type EgressProxy, type ProxyDecision, startEgressProxy } from '../sandbox/proxy.js';
export { type SandboxSupport, sandboxSupport } from '../sandbox/support.js';
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
} from '../security/capabilities.js';
export {
  catalogSignals,
  type DefinitionKind,
  type DefinitionReport,
  type ScannableDefinition,
  scanCatalog,
} from '../security/catalog.js';
export { type DefinitionsFile, loadDefinitionsFile } from '../security/definitions-file.js';
export { heldNotice, heldToolText, heldWhy } from '../security/held.js';
export {
  applyJudge,
  JUDGE_RUBRIC,
  type JudgeCall,
  type JudgeVerdict,
  judgeGrey,
} from '../security/judge.js';
export {
  acceptPins,
  DefinitionGuard,
  type GuardReview,
  guardOptions,
  type HeldDefinition,
  type PinKind,
  pinDiff,
  type ServerDefinitions,
  scanPinnedText,
  toolPinDefinition,
} from '../security/pins.js';
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
} from '../security/project-trust.js';
export {
  type PermissionRules,
  type RuleAction,
  type RuleMatch,
  RuleSet,
  ruleProblem,
} from '../security/rules.js';
export type { ScannableTool } from '../security/scan.js';
export {
  type Finding,
  type FindingCode,
  type FindingSeverity,
  type ScanLocation,
  type ScanVerdict,
  scanText,
  scanTool,
  type ToolScan,
  verdictOf,
} from '../security/scan.js';
export { SCAN_MODEL } from '../security/scan-model.js';
export { type ScanModel, weigh } from '../security/verdict.js';
