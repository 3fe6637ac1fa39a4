/**
 * `tack/knowledge`: Open Knowledge Format bundles (load, search, render, graph, generate) and attested computations
 * with their executors and receipts.
 */

export {
  type ComputationAttester,
  sqlEqualityAttester,
  type Verdict,
} from '../knowledge/attest/attesters.js';
export { type ComputationExecutor, type Receipt, ReceiptLog } from '../knowledge/attest/executors.js';
export { type PostgresExecutorOptions, postgresExecutor } from '../knowledge/attest/postgres.js';
export {
  type AttestedOutcome,
  type ComputationOutcome,
  formatOutcome,
  type RefusedOutcome,
  type RunComputationOptions,
  runComputation,
} from '../knowledge/attest/run.js';
export { type SqliteExecutorOptions, sqliteExecutor } from '../knowledge/attest/sqlite.js';
export { type KnowledgeBundle, type LoadBundleOptions, loadBundle } from '../knowledge/bundle.js';
export type { Concept } from '../knowledge/concept.js';
export { type GenerateOptions, type GenerateResult, generateBundle } from '../knowledge/generate.js';
export { type GraphFormat, renderGraph } from '../knowledge/graph.js';
export { formatKnowledgeIssue, type KnowledgeIssue } from '../knowledge/issues.js';
export {
  KnowledgeBase,
  type KnowledgeHit,
  type SearchOptions as KnowledgeSearchOptions,
} from '../knowledge/knowledge.js';
export { renderConcept } from '../knowledge/render.js';
export { knowledgeTools } from '../knowledge/tools.js';
export { type TrustTier, trustTier } from '../knowledge/trust-tier.js';
