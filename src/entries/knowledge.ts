/**
 * `tack/knowledge`: Open Knowledge Format bundles (load, validate, search, render, graph, generate, edit) and
 * attested computations with their executors and receipts.
 */

export {
  type AttestInput,
  type ComputationAttester,
  sqlEqualityAttester,
  type Verdict,
} from '../knowledge/attest/attesters.js';
export {
  type ComputationExecutor,
  type ExecuteRequest,
  type Receipt,
  ReceiptLog,
} from '../knowledge/attest/executors.js';
export {
  exampleValue,
  type ParameterType,
  type ParameterValue,
  parameterType,
} from '../knowledge/attest/parameters.js';
export { type PostgresExecutorOptions, postgresExecutor } from '../knowledge/attest/postgres.js';
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
} from '../knowledge/attest/run.js';
export { type SqliteExecutorOptions, sqliteExecutor } from '../knowledge/attest/sqlite.js';
export {
  type BundleCacheReport,
  type Edge,
  type EdgeKind,
  KnowledgeBundle,
  type LoadBundleOptions,
  loadBundle,
} from '../knowledge/bundle.js';
export type { ComputationContract, ComputationParameter } from '../knowledge/computation.js';
export {
  type Actor,
  type Concept,
  type ConceptSource,
  type ConceptStatus,
  isStale,
  parseConcept,
} from '../knowledge/concept.js';
export { recordVerification, setFrontMatter } from '../knowledge/edit.js';
export {
  GENERATED_TYPE,
  GENERATOR_ACTOR,
  type GenerateOptions,
  type GenerateResult,
  generateBundle,
} from '../knowledge/generate.js';
export {
  type GraphFormat,
  type GraphJson,
  type GraphOptions,
  graphJson,
  renderGraph,
} from '../knowledge/graph.js';
export {
  applyIndexPlan,
  GENERATED_BEGIN,
  GENERATED_END,
  type IndexFilePlan,
  type IndexPlan,
  planIndexes,
  writeIndexes,
} from '../knowledge/index-file.js';
export { formatKnowledgeIssue, type KnowledgeIssue } from '../knowledge/issues.js';
export {
  bundleSummary,
  KnowledgeBase,
  type KnowledgeHit,
  type LoadOptions,
  loadBundleRef,
  type SearchOptions as KnowledgeSearchOptions,
} from '../knowledge/knowledge.js';
export { conceptUri, renderConcept } from '../knowledge/render.js';
export {
  type ComputationRuntimes,
  computationTool,
  openRuntimes,
  RUN_COMPUTATION,
  type RuntimeSettings,
  runNamedComputation,
} from '../knowledge/runtimes.js';
export { parseTimeValue, type TimeForm, type TimeValue } from '../knowledge/time.js';
export { formatHits, knowledgeTools, READ_CONCEPT, SEARCH_KNOWLEDGE } from '../knowledge/tools.js';
export { isTrustTier, TRUST_TIERS, type TrustTier, trustTier } from '../knowledge/trust-tier.js';
