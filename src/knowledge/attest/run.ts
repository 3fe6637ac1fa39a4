import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { errorMessage, TackError } from '../../errors.js';
import type { ComputationContract } from '../computation.js';
import { ATTESTED_COMPUTATION, type Concept, isStale } from '../concept.js';
import { isUrl, resolveInBundle } from '../link-targets.js';
import { type ComputationAttester, sqlEqualityAttester, type Verdict } from './attesters.js';
import type { ComputationExecutor, Receipt, ReceiptLog } from './executors.js';
import { checkParameters } from './parameters.js';

/** Which concept an outcome is about, for whoever shows it. */
export interface OutcomeConcept {
  id: string;
  path: string;
  title: string;
}

/** A computation whose receipt the attester accepted: its value may be shown. */
export interface AttestedOutcome {
  status: 'attested';
  concept: OutcomeConcept;
  /** The recorded receipt (frozen): `receipt.result` is the value that may be shown. */
  receipt: Readonly<Receipt>;
  verdict: Verdict;
  /** The attester's name, and the bundle's `attester.resource` it stood for, if any. */
  attester: string;
  stale: boolean;
  /** Stale, deprecated, draft, or a bundle attester tack does not have: say these alongside the value. */
  warnings: string[];
}

/** A computation that did not pass: the reason, and no value to show. */
export interface RefusedOutcome {
  status: 'refused';
  concept: OutcomeConcept;
  reason: string;
  attester?: string;
  verdict?: Verdict;
  /**
   * The receipt of a run that failed attestation, kept for audit only: its result did not come from the
   * sanctioned computation as claimed and must not be displayed. Deliberately not called `receipt`.
   */
  rejectedReceipt?: Readonly<Receipt>;
}

/** What `runComputation` returns: attested (with a value to show) or refused (without one). */
export type ComputationOutcome = AttestedOutcome | RefusedOutcome;

/** The contract and sanctioned text of an Attested Computation, loaded from its concept and bundle. */
export interface LoadedComputation {
  contract: ComputationContract & { runtime: string };
  /** The sanctioned computation text. */
  text: string;
  /** `inline` (the body's `# Computation` block) or the bundle-relative path of the `computation` file. */
  source: string;
}

/**
 * The sanctioned text of a computation (§10.3): the `computation` file, resolved like every path-valued field
 * (§6.2) and required to lie inside the bundle, or else the body's `# Computation` block.
 */
export function loadComputation(bundleRoot: string, concept: Concept): LoadedComputation {
  const subject = { file: concept.path };
  if (concept.type !== ATTESTED_COMPUTATION || !concept.computation)
    throw new TackError(
      'COMPUTATION_FAILED',
      `${concept.path} is a "${concept.type}", not an ${ATTESTED_COMPUTATION}: there is nothing to run`,
      { subject, hint: 'Run the Attested Computation the concept links to.' },
    );
  const contract = concept.computation;
  if (!contract.runtime)
    throw new TackError('COMPUTATION_FAILED', `${concept.path} has no \`runtime\`, so nothing can run it`, {
      subject: { ...subject, path: 'runtime' },
      hint: 'Add `runtime:` (sqlite, postgres, ...) to the concept.',
    });
  const withRuntime = contract as ComputationContract & { runtime: string };
  if (contract.file !== undefined) {
    const file = contract.file;
    if (isUrl(file))
      throw new TackError(
        'COMPUTATION_FAILED',
        `refused: the computation ${file} is a URL; only a file inside the bundle can be a sanctioned computation`,
        { subject: { ...subject, path: 'computation' } },
      );
    const resolved = resolveInBundle(bundleRoot, concept.path, file);
    if (resolved?.kind === 'folder')
      throw new TackError('COMPUTATION_FAILED', `the computation ${file} is a folder, not a file`, {
        subject: { ...subject, path: 'computation' },
        hint: 'Point `computation:` at the file that holds the computation.',
      });
    if (!resolved) {
      const lexical = file.startsWith('/')
        ? [posix.normalize(file.slice(1))]
        : [posix.normalize(posix.join(posix.dirname(concept.path), file)), posix.normalize(file)];
      // Escaping by `..`, or existing where it points yet not resolved: a symlink out of the bundle.
      const outside =
        lexical.every((p) => p.startsWith('..')) ||
        lexical.some((p) => !p.startsWith('..') && existsSync(join(bundleRoot, p)));
      throw new TackError(
        'COMPUTATION_FAILED',
        outside
          ? `refused: the computation ${file} leads outside the bundle; a sanctioned computation must be part of it`
          : `the computation file ${file} does not exist in the bundle`,
        { subject: { ...subject, path: 'computation' }, hint: 'Fix `computation:` in the concept.' },
      );
    }
    let text: string;
    try {
      // A byte order mark (Windows editors write one) is no part of the SQL: PostgreSQL would read it as a letter.
      text = readFileSync(join(bundleRoot, resolved.path), 'utf8').replace(/^\uFEFF/, '');
    } catch (error) {
      throw new TackError(
        'COMPUTATION_FAILED',
        `cannot read the computation ${resolved.path}: ${errorMessage(error)}`,
        {
          subject: { file: resolved.path },
          cause: error,
        },
      );
    }
    return { contract: withRuntime, text, source: resolved.path };
  }
  if (contract.inline) return { contract: withRuntime, text: contract.inline.text, source: 'inline' };
  throw new TackError('COMPUTATION_FAILED', `${concept.path} has no computation`, {
    subject,
    hint: 'Add a code block under # Computation, or a `computation:` path to a file in the bundle.',
  });
}

/** The concept to run, its parameter values, the executors by runtime and the attesters. */
export interface RunComputationOptions {
  bundleRoot: string;
  concept: Concept;
  /** The values for the declared parameters, unchecked (usually the model's tool arguments). */
  values: Record<string, unknown>;
  executors: ComputationExecutor[] | Record<string, ComputationExecutor>;
  /**
   * Attesters by the basename of the concept's `attester.resource` (with or without its extension), or
   * `default`. `sql-equality` and `default` are the built-in SQL-equality attester unless replaced here.
   */
  attesters?: Record<string, ComputationAttester>;
  /** The log to re-read receipts from; default: the executor's own. */
  log?: ReceiptLog;
  /** For staleness; default `Date.now()`. */
  now?: number;
  /** The value about to be displayed, if the caller already has one. */
  claimed?: unknown;
}

/**
 * Runs an Attested Computation the way §10.5 describes: load the contract and sanctioned text, check the
 * values, execute on the executor for the runtime, attest the receipt, gate. A run that fails attestation comes
 * back `refused`, with its receipt under `rejectedReceipt` for audit and no value to show.
 *
 * Throws `COMPUTATION_INPUT` for values that do not fit the declared parameters, and `COMPUTATION_FAILED` when
 * nothing could run (not a computation, no runtime or no executor for it, a computation file missing or outside
 * the bundle, the database refusing the statement).
 */
export async function runComputation(options: RunComputationOptions): Promise<ComputationOutcome> {
  const { concept } = options;
  const loaded = loadComputation(options.bundleRoot, concept);
  const values = checkParameters(loaded.contract, options.values, concept.path);
  const executor = pickExecutor(options.executors, loaded.contract.runtime, concept.path);
  const log = options.log ?? executor.log;
  if (!log)
    throw new TackError(
      'COMPUTATION_FAILED',
      `the ${executor.runtime} executor keeps no receipt log, and none was given: its receipts cannot be re-read`,
      {
        subject: { file: concept.path },
        hint: 'Pass `log` to runComputation (the log the executor records in).',
      },
    );
  let receipt: Receipt;
  try {
    receipt = await executor.execute({
      conceptId: concept.id,
      sql: loaded.text,
      parameters: loaded.contract.parameters,
      values,
    });
  } catch (error) {
    if (TackError.isInstance(error)) throw error;
    throw new TackError(
      'COMPUTATION_FAILED',
      `the ${executor.runtime} executor failed: ${errorMessage(error)}`,
      {
        subject: { file: concept.path },
        cause: error,
      },
    );
  }
  return gate(loaded, {
    concept,
    receipt,
    values,
    log,
    claimed: options.claimed,
    attesters: options.attesters,
    now: options.now,
  });
}

export interface AttestOptions {
  bundleRoot: string;
  concept: Concept;
  /** The receipt as handed in: attested only if it is, unaltered, one the log recorded. */
  receipt: Receipt;
  values: Record<string, unknown>;
  log: ReceiptLog;
  claimed?: unknown;
  attesters?: Record<string, ComputationAttester>;
  now?: number;
}

/** Attests a receipt produced elsewhere (§10.5 steps 5-6) and gates it like `runComputation` does. */
export async function attest(options: AttestOptions): Promise<ComputationOutcome> {
  return gate(loadComputation(options.bundleRoot, options.concept), options);
}

async function gate(
  loaded: LoadedComputation,
  options: Omit<AttestOptions, 'bundleRoot'>,
): Promise<ComputationOutcome> {
  const { concept, receipt, log } = options;
  const about: OutcomeConcept = { id: concept.id, path: concept.path, title: concept.title };
  const warnings: string[] = [];
  const picked = pickAttester(loaded.contract, options.attesters);
  if (!picked)
    return {
      status: 'refused',
      concept: about,
      reason: `no attester for ${loaded.contract.attester?.resource ?? 'this computation'}: none is registered under its name and there is no default`,
      rejectedReceipt: receipt,
    };
  const { attester, name } = picked;
  if (picked.substitute)
    warnings.push(
      `the bundle names the attester ${loaded.contract.attester?.resource}; tack has none under that name and attested with ${attester.name}`,
    );
  let verdict: Verdict;
  try {
    verdict = await attester.attest({
      concept,
      sanctionedSql: loaded.text,
      values: options.values,
      receipt,
      claimed: options.claimed,
      log,
    });
  } catch (error) {
    verdict = { ok: false, reason: `the attester ${attester.name} failed: ${errorMessage(error)}` };
  }
  if (!verdict.ok)
    return {
      status: 'refused',
      concept: about,
      reason: verdict.reason,
      attester: name,
      verdict,
      rejectedReceipt: receipt,
    };

  const now = options.now ?? Date.now();
  const stale = isStale(concept, now);
  if (stale)
    warnings.push(
      `stale since ${concept.staleAfter?.raw}: the definition is past its stale_after and due for re-verification; the run attested, but say the figure may rest on an outdated definition`,
    );
  if (concept.status === 'deprecated')
    warnings.push('the computation is deprecated: prefer its replacement if the bundle names one');
  if (concept.status === 'draft')
    warnings.push('the computation is a draft: its definition is not yet reviewed');
  // The authoritative copy: a caller that handed in an equal receipt gets the recorded one back.
  const recorded = log.get(receipt.job_id) ?? receipt;
  return { status: 'attested', concept: about, receipt: recorded, verdict, attester: name, stale, warnings };
}

function pickExecutor(
  executors: ComputationExecutor[] | Record<string, ComputationExecutor>,
  runtime: string,
  conceptPath: string,
): ComputationExecutor {
  const list = Array.isArray(executors)
    ? executors.map((e) => [e.runtime, e] as const)
    : Object.entries(executors);
  const found = list.find(([r]) => r === runtime);
  if (found) return found[1];
  const available = [...new Set(list.map(([r]) => r))];
  throw new TackError(
    'COMPUTATION_FAILED',
    `no executor for runtime "${runtime}"; available runtimes: ${available.length > 0 ? available.join(', ') : 'none'}`,
    {
      subject: { file: conceptPath, path: 'runtime' },
      hint: 'Configure an executor for this runtime, or run a computation whose runtime has one.',
    },
  );
}

function pickAttester(
  contract: ComputationContract,
  extra: Record<string, ComputationAttester> | undefined,
): { attester: ComputationAttester; name: string; substitute: boolean } | undefined {
  const registry: Record<string, ComputationAttester> = {
    'sql-equality': sqlEqualityAttester,
    default: sqlEqualityAttester,
    ...extra,
  };
  const resource = contract.attester?.resource;
  const label = (a: ComputationAttester) => (resource ? `${a.name} (${resource})` : a.name);
  if (resource) {
    const base = posix.basename(resource.replace(/[?#].*$/, ''));
    for (const key of [base, base.replace(/\.[^.]+$/, '')])
      if (Object.hasOwn(registry, key))
        return { attester: registry[key]!, name: label(registry[key]!), substitute: false };
  }
  const fallback = Object.hasOwn(registry, 'default') ? registry.default : undefined;
  return fallback
    ? { attester: fallback, name: label(fallback), substitute: resource !== undefined }
    : undefined;
}

/** Throws `ATTESTATION_FAILED` for a refused outcome; for callers that prefer an exception to a branch. */
export function requireAttested(outcome: ComputationOutcome): AttestedOutcome {
  if (outcome.status === 'attested') return outcome;
  throw new TackError('ATTESTATION_FAILED', `${outcome.concept.path}: not attested: ${outcome.reason}`, {
    subject: { file: outcome.concept.path },
    hint: 'Do not use a value from this run. Run the computation again through its executor.',
  });
}

/**
 * The outcome as text for the model. Attested: the value (each column of the first row), the job id, who
 * attested and any warning. Refused: the reason and that no value from the run may be used; the result is not
 * in the text at all.
 */
export function formatOutcome(outcome: ComputationOutcome): string {
  const name = `${outcome.concept.title} (${outcome.concept.id})`;
  if (outcome.status === 'refused')
    return [
      `REFUSED: ${name} did not attest: ${outcome.reason}`,
      'Do not use, repeat or estimate any value from this run: it is not shown because it did not come from the sanctioned computation as claimed.',
    ].join('\n');
  const { receipt } = outcome;
  const lines = [`${name}, attested:`];
  const result = receipt.result;
  if (result === null || result === undefined) lines.push('  (no rows)');
  else if (Array.isArray(result)) {
    const columns = Array.isArray(receipt.columns) ? receipt.columns : [];
    result.forEach((cell, i) => {
      lines.push(`  ${columns[i] ?? `column ${i + 1}`} = ${JSON.stringify(cell)}`);
    });
  } else lines.push(`  ${JSON.stringify(result)}`);
  lines.push(
    `job ${receipt.job_id} (${receipt.runtime}); attested by ${outcome.attester}: ${outcome.verdict.reason}`,
  );
  for (const warning of outcome.warnings) lines.push(`warning: ${warning}`);
  return lines.join('\n');
}
