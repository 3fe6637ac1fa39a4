import { TackError } from '../errors.js';
import { type NativeTool, nativeTool, ToolInputError } from '../tools/native.js';
import type { ComputationAttester } from './attest/attesters.js';
import { type ComputationExecutor, ReceiptLog } from './attest/executors.js';
import { type ComputationOutcome, formatOutcome, runComputation } from './attest/run.js';
import { sqliteExecutor } from './attest/sqlite.js';
import type { KnowledgeBase } from './knowledge.js';
import { KNOWLEDGE_TRAITS, RUN_COMPUTATION } from './tools.js';

export { RUN_COMPUTATION } from './tools.js';

/** Where computations run, by runtime: the `knowledge.runtimes` block of tack.json, or the CLI's flags. */
export interface RuntimeSettings {
  sqlite?: { database: string };
  postgres?: { url: string };
}

/** The executors of the configured runtimes, one receipt log for all, and attesters by name. */
export interface ComputationRuntimes {
  executors: ComputationExecutor[];
  log: ReceiptLog;
  attesters?: Record<string, ComputationAttester>;
  close(): Promise<void>;
}

/**
 * Opens an executor per configured runtime. Connections are lazy (the first run opens them), so a database that
 * is down fails that run with a clear error, not the server start. pg is imported only when postgres is
 * configured: it is not loaded for bundles that never compute.
 */
export async function openRuntimes(settings: RuntimeSettings): Promise<ComputationRuntimes> {
  const log = new ReceiptLog();
  const executors: ComputationExecutor[] = [];
  if (settings.sqlite) executors.push(sqliteExecutor({ database: settings.sqlite.database, log }));
  if (settings.postgres) {
    const { postgresExecutor } = await import('./attest/postgres.js');
    executors.push(postgresExecutor({ connectionString: settings.postgres.url, log }));
  }
  return {
    executors,
    log,
    close: async () => {
      await Promise.all(executors.map((e) => e.close?.()));
    },
  };
}

/**
 * run_computation: the model names an Attested Computation and supplies values for its declared parameters,
 * never SQL. The run is attested before anything is shown; a refused run is an error result without the value.
 */
export function computationTool(
  base: KnowledgeBase,
  runtimes: ComputationRuntimes,
  options: { now?: () => number; onOutcome?: (outcome: ComputationOutcome) => void } = {},
): NativeTool {
  const available = runtimes.executors.map((e) => e.runtime).join(', ') || 'none';
  return nativeTool(
    RUN_COMPUTATION,
    'Run an Attested Computation concept (type "Attested Computation") with values for its declared parameters, ' +
      'and get its attested result. You supply only parameter values, never the computation itself. A run whose ' +
      `receipt does not attest is refused and its value withheld. Runtimes here: ${available}.`,
    {
      id: {
        type: 'string',
        description: 'The computation concept: okf://<bundle>/<id> or an id from search_knowledge',
      },
      parameters: {
        type: 'object',
        description: 'Values by parameter name, typed as the concept declares (e.g. {"year": 2026})',
        additionalProperties: true,
      },
    },
    ['id'],
    async (arg, input) => {
      const values = input.parameters ?? {};
      if (typeof values !== 'object' || values === null || Array.isArray(values))
        throw new ToolInputError(`${RUN_COMPUTATION}: "parameters" must be an object of values by name`);
      const outcome = await runNamedComputation(
        base,
        runtimes,
        arg('id'),
        values as Record<string, unknown>,
        (options.now ?? Date.now)(),
      );
      options.onOutcome?.(outcome);
      return { text: formatOutcome(outcome), ...(outcome.status === 'refused' ? { isError: true } : {}) };
    },
    KNOWLEDGE_TRAITS,
  );
}

/**
 * Runs the Attested Computation `id` names (any form KnowledgeBase.resolve reads) on the configured runtimes:
 * what run_computation and `tack knowledge run` both do. Throws TackError for what could not run at all; a run
 * that does not attest comes back `refused`.
 */
export async function runNamedComputation(
  base: KnowledgeBase,
  runtimes: ComputationRuntimes,
  id: string,
  values: Record<string, unknown>,
  now: number = Date.now(),
): Promise<ComputationOutcome> {
  const { bundle, concept } = base.resolve(id);
  if (!concept.computation)
    throw new TackError(
      'COMPUTATION_INPUT',
      `${concept.id} is a ${concept.type}, not an Attested Computation`,
      {
        hint: 'search_knowledge with type "Attested Computation" finds the computations.',
      },
    );
  return runComputation({
    bundleRoot: bundle.root,
    concept,
    values,
    executors: runtimes.executors,
    log: runtimes.log,
    ...(runtimes.attesters ? { attesters: runtimes.attesters } : {}),
    now,
  });
}
