import { errorMessage } from '../../errors.js';
import { canonicalJson } from '../../util/canonical-json.js';
import type { Concept } from '../concept.js';
import type { Receipt, ReceiptLog } from './executors.js';
import { checkParameters } from './parameters.js';
import { bindParameters, bindStyleFor, canonicalSqlTokens, describeSqlDifference } from './sql.js';

export interface AttestInput {
  concept: Concept;
  /** The sanctioned computation text, as the bundle holds it (holes written `@name`). */
  sanctionedSql: string;
  /** The values the caller says the run used. */
  values: Record<string, unknown>;
  /** The receipt as handed in: only a claim until it matches the log. */
  receipt: Receipt;
  /** The value about to be displayed, when there is one: it must be the run's result. */
  claimed?: unknown;
  log: ReceiptLog;
}

export interface Verdict {
  ok: boolean;
  /** What was checked on success; exactly what differed on failure. Never the result's value. */
  reason: string;
}

/** Deterministic (no LLM) code that inspects a receipt and returns a verdict (§10.2 `attester`). */
export interface ComputationAttester {
  name: string;
  /** Whether a receipt shows the sanctioned statement ran with the given values. */
  attest(input: AttestInput): Promise<Verdict> | Verdict;
}

const fail = (reason: string): Verdict => ({ ok: false, reason });

/**
 * The SQL-equality attester (§10.3, §10.5 step 5), in the order a forger would have to get past it:
 * (a) the receipt is the one the executor recorded under its job id, unaltered; everything after reads that
 *     recorded copy, never the one handed in;
 * (b) provenance: the SQL that ran, canonicalized, equals the sanctioned SQL bound the way the runtime binds,
 *     re-derived here rather than taken from the executor;
 * (c) it ran with the values the caller supplied;
 * (d) every receipt field the contract declares is present;
 * (e) fidelity: a claimed value equals the recorded result.
 */
export const sqlEqualityAttester: ComputationAttester = {
  name: 'sql-equality',
  attest({ concept, sanctionedSql, values, receipt, claimed, log }): Verdict {
    const contract = concept.computation;
    if (!contract?.runtime) return fail(`${concept.path} is not an Attested Computation with a runtime`);

    // (a)
    const jobId = typeof receipt === 'object' && receipt !== null ? receipt.job_id : undefined;
    if (typeof jobId !== 'string' || jobId === '')
      return fail('receipt not found: the receipt has no job_id');
    const recorded = log.get(jobId);
    if (!recorded)
      return fail(
        `receipt not found: job ${jobId} is not in the receipt log, so no executor recorded it; an unrecorded receipt cannot be attested`,
      );
    const changed = differingFields(recorded, receipt);
    if (changed.length > 0)
      return fail(
        `receipt tampered: the receipt handed in differs from the one recorded for job ${jobId} in ${changed.join(', ')}`,
      );

    if (recorded.runtime !== contract.runtime)
      return fail(
        `job ${jobId} ran on runtime "${recorded.runtime}", but the computation's runtime is "${contract.runtime}"`,
      );
    if (recorded.concept_id !== concept.id)
      return fail(`job ${jobId} ran computation "${recorded.concept_id}", not "${concept.id}"`);

    // (b)
    const style = bindStyleFor(contract.runtime);
    if (style === undefined)
      return fail(
        `the sql-equality attester does not know how runtime "${contract.runtime}" binds parameters`,
      );
    let expected: string[];
    try {
      expected = canonicalSqlTokens(
        bindParameters(
          sanctionedSql,
          contract.parameters.map((p) => p.name),
          style,
        ).sql,
      );
    } catch (error) {
      return fail(`the sanctioned computation cannot be bound: ${errorMessage(error)}`);
    }
    const executed = recorded.executed_sql;
    if (typeof executed !== 'string') return fail(`job ${jobId} recorded no executed_sql`);
    let executedTokens: string[];
    try {
      executedTokens = canonicalSqlTokens(executed);
    } catch (error) {
      return fail(`provenance: job ${jobId} ran SQL the attester cannot compare: ${errorMessage(error)}`);
    }
    const difference = describeSqlDifference(expected, executedTokens);
    if (difference !== undefined)
      return fail(`provenance: job ${jobId} did not run the sanctioned computation: ${difference}`);

    // (c)
    let checked: Record<string, unknown>;
    try {
      checked = checkParameters(contract, values, concept.path);
    } catch (error) {
      return fail(`the supplied parameter values do not check: ${errorMessage(error)}`);
    }
    const ran = recorded.parameters ?? {};
    for (const name of new Set([...Object.keys(checked), ...Object.keys(ran)])) {
      if (canonicalJson(ran[name] ?? null) !== canonicalJson(checked[name] ?? null))
        return fail(
          `parameters: job ${jobId} ran with ${name} = ${JSON.stringify(ran[name] ?? null)}, but the supplied value is ${JSON.stringify(checked[name] ?? null)}`,
        );
    }

    // (d)
    const declared = contract.executor?.receipt ?? [];
    const missing = declared.filter(
      (field) => !Object.hasOwn(recorded, field) || recorded[field] === undefined,
    );
    if (missing.length > 0)
      return fail(
        `the receipt of job ${jobId} lacks the field(s) the contract declares: ${missing.join(', ')}`,
      );

    // (e)
    if (claimed !== undefined && !matchesResult(claimed, recorded.result))
      return fail(`fidelity: the claimed value is not the result recorded for job ${jobId}`);

    const bound = Object.entries(checked)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(', ');
    return {
      ok: true,
      reason:
        `job ${jobId} ran the sanctioned computation (${expected.length} canonical tokens equal)` +
        `${bound ? ` with ${bound}` : ''}; declared receipt fields present` +
        `${claimed !== undefined ? '; the claimed value is the recorded result' : ''}`,
    };
  },
};

/** The top-level fields in which two receipts differ (each compared as canonical JSON). */
function differingFields(recorded: Readonly<Receipt>, handed: Receipt): string[] {
  if (typeof handed !== 'object' || handed === null) return ['the whole receipt'];
  const keys = new Set([...Object.keys(recorded), ...Object.keys(handed)]);
  return [...keys].filter(
    (k) =>
      canonicalJson(recorded[k] ?? null) !== canonicalJson((handed as Record<string, unknown>)[k] ?? null),
  );
}

/**
 * Whether a displayed value is the run's result: the whole first row, or (as the acme_retail executor skill
 * puts it, "the value the caller is about to display equals receipt.result[0]") its first cell.
 */
function matchesResult(claimed: unknown, result: unknown): boolean {
  if (sameValue(claimed, result)) return true;
  return (
    Array.isArray(result) && !Array.isArray(claimed) && result.length > 0 && sameValue(claimed, result[0])
  );
}

const NUMERIC = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;
const asNumber = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && NUMERIC.test(v) ? Number(v) : undefined;

/**
 * Deep equality where a number and a numeric string compare as numbers: PostgreSQL sends NUMERIC as `"1234.50"`,
 * a model writes 1234.5. Both go through a double, so two decimals equal to 15-odd significant digits match.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]))
    );
  if (typeof a === 'number' || typeof b === 'number' || (typeof a === 'string' && typeof b === 'string')) {
    if (a === b) return true;
    const [x, y] = [asNumber(a), asNumber(b)];
    return x !== undefined && y !== undefined && x === y;
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) =>
          Object.hasOwn(b, k) &&
          sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return a === b;
}
