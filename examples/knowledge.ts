/**
 * tack/knowledge: load an OKF bundle, search it, render a concept as the model reads it, draw its link graph, and
 * run an attested computation against a database. Run it after `npm run build` with:
 * node dist/examples/knowledge.js (from the repository's root)
 */
import {
  type AttestedOutcome,
  type ComputationAttester,
  type ComputationExecutor,
  type ComputationOutcome,
  type Concept,
  formatKnowledgeIssue,
  formatOutcome,
  type GenerateOptions,
  type GenerateResult,
  type GraphFormat,
  generateBundle,
  KnowledgeBase,
  type KnowledgeBundle,
  type KnowledgeHit,
  type KnowledgeIssue,
  type KnowledgeSearchOptions,
  knowledgeTools,
  type LoadBundleOptions,
  loadBundle,
  type PostgresExecutorOptions,
  postgresExecutor,
  type Receipt,
  ReceiptLog,
  type RefusedOutcome,
  type RunComputationOptions,
  renderConcept,
  renderGraph,
  runComputation,
  type SqliteExecutorOptions,
  sqlEqualityAttester,
  sqliteExecutor,
  type TrustTier,
  trustTier,
  type Verdict,
} from '../src/entries/knowledge.js';

// From the repository's root, as the line above says (the same path from source or built).
const root = 'examples/knowledge/weather';

// loadBundle never throws on a bundle's content: a broken file is a KnowledgeIssue and is left out.
const options: LoadBundleOptions = { name: 'weather' };
const bundle: KnowledgeBundle = await loadBundle(root, options);
const issues: readonly KnowledgeIssue[] = bundle.issues;
for (const issue of issues) console.log(formatKnowledgeIssue(issue, bundle.name));

// KnowledgeBase searches any number of bundles; `summary()` is the line per bundle the harness puts in context.
const base = new KnowledgeBase([bundle]);
const search: KnowledgeSearchOptions = { k: 3, minTrust: 'unverified' };
const hits: KnowledgeHit[] = base.search('wind speed units', search);
for (const hit of hits) console.log(`${hit.uri} (${hit.trust}): ${hit.title}`);
console.log(base.summary());

// What read_concept returns: the weighing facts (type, trust, freshness, sources) before the body.
const first = hits[0];
if (first) {
  const concept: Concept = base.resolve(first.uri).concept;
  const tier: TrustTier = trustTier(concept.verified);
  console.log(tier, renderConcept(bundle, concept));
}

const format: GraphFormat = 'mermaid';
console.log(renderGraph(bundle, format));

// The native tools (search_knowledge, read_concept) to hand an AgentSession of your own.
console.log(knowledgeTools(base).map((tool) => tool.name));

/**
 * An Attested Computation runs its sanctioned SQL read-only on an executor, and its receipt must pass the attester
 * before the value may be shown: a refused outcome carries no value.
 */
export async function computeFromSqlite(file: string, conceptId: string, values: Record<string, unknown>) {
  const log = new ReceiptLog(100);
  const settings: SqliteExecutorOptions = { database: file, log };
  const executor: ComputationExecutor = sqliteExecutor(settings);
  const attester: ComputationAttester = sqlEqualityAttester;
  const run: RunComputationOptions = {
    bundleRoot: bundle.root,
    concept: bundle.require(conceptId),
    values,
    executors: [executor],
    attesters: { default: attester },
  };
  try {
    const outcome: ComputationOutcome = await runComputation(run);
    console.log(formatOutcome(outcome));
    if (outcome.status === 'attested') {
      const attested: AttestedOutcome = outcome;
      const receipt: Readonly<Receipt> = attested.receipt;
      const verdict: Verdict = outcome.verdict;
      console.log(receipt.job_id, verdict.reason, log.get(receipt.job_id)?.result);
    } else {
      const refused: RefusedOutcome = outcome;
      console.log(`refused: ${refused.reason}`);
    }
    return outcome;
  } finally {
    await executor.close?.();
  }
}

/** The same on PostgreSQL: a pool of its own, each statement in a read-only transaction with a timeout. */
export function postgresRuntime(connectionString: string): ComputationExecutor {
  const settings: PostgresExecutorOptions = {
    connectionString,
    log: new ReceiptLog(),
    statementTimeoutMs: 5_000,
  };
  return postgresExecutor(settings);
}

/** A starter bundle from a folder of Markdown (`tack knowledge init --from`): one Reference concept per file. */
export async function starterBundle(from: string, out: string): Promise<GenerateResult> {
  const options: GenerateOptions = { from, out };
  const result = await generateBundle(options);
  console.log(`${result.concepts} concepts, ${result.skipped.length} files skipped`);
  return result;
}
