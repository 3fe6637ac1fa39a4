import { join, relative, resolve, sep } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { KnowledgeConfig, TackConfig } from '../../config/load.js';
import { resolvePaths } from '../../config/paths.js';
import { TackError } from '../../errors.js';
import { exampleValue, type ParameterType, parameterType } from '../../knowledge/attest/parameters.js';
import { type ComputationOutcome, formatOutcome } from '../../knowledge/attest/run.js';
import { type KnowledgeBundle, loadBundle } from '../../knowledge/bundle.js';
import { isStale } from '../../knowledge/concept.js';
import { recordVerification } from '../../knowledge/edit.js';
import { generateBundle } from '../../knowledge/generate.js';
import { type GraphFormat, graphJson, renderGraph } from '../../knowledge/graph.js';
import {
  applyIndexPlan,
  type IndexFilePlan,
  type IndexPlan,
  planIndexes,
} from '../../knowledge/index-file.js';
import { formatKnowledgeIssue } from '../../knowledge/issues.js';
import { bundleSummary, KnowledgeBase, type LoadOptions, loadBundleRef } from '../../knowledge/knowledge.js';
import { renderConcept } from '../../knowledge/render.js';
import { openRuntimes, type RuntimeSettings, runNamedComputation } from '../../knowledge/runtimes.js';
import { formatHits } from '../../knowledge/tools.js';
import { isTrustTier, TRUST_TIERS } from '../../knowledge/trust-tier.js';
import { POSTGRES_URL_ENV } from '../../servers/knowledge/entry.js';
import { print, printErr, printJson, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface KnowledgeOptions extends GlobalOptions {
  /** Bundle folders (`path` or `name=path`); default the configuration's knowledge.bundles. */
  bundles?: string[];
}

/** The runtimes computations run on: --sqlite / --postgres, then $TACK_POSTGRES_URL, then tack.json. */
export function runtimeSettings(
  options: { sqlite?: string; postgres?: string },
  config: TackConfig,
): RuntimeSettings {
  const settings: RuntimeSettings = { ...config.knowledge.runtimes };
  if (options.sqlite) settings.sqlite = { database: resolve(options.sqlite) };
  const url = options.postgres ?? process.env[POSTGRES_URL_ENV];
  if (url) settings.postgres = { url };
  return settings;
}

/** `name=path` names a bundle; a plain path takes its folder name. */
export function parseBundleArg(arg: string): { path: string; name?: string } {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)=(.+)$/.exec(arg);
  return match ? { name: match[1]!, path: match[2]! } : { path: arg };
}

/** The bundles named on the command line, else the configured ones; none at all is a usage error. */
export async function bundleRoots(
  options: KnowledgeOptions,
  config?: TackConfig,
): Promise<KnowledgeConfig['bundles']> {
  if (options.bundles && options.bundles.length > 0) return options.bundles.map(parseBundleArg);
  const configured = (config ?? (await loadCliConfig(options))).knowledge.bundles;
  if (configured.length === 0)
    throw new TackError('USAGE', 'no knowledge bundle given', {
      hint: 'Name a bundle folder, or list bundles in tack.json: { "knowledge": { "bundles": ["./kb"] } }.',
    });
  return configured;
}

/**
 * How the knowledge commands load bundles: with each bundle's cache in the state directory (bundle-cache.ts), its
 * problems on stderr. The paths come from the environment (TACK_HOME, XDG), so a bundle named on the command
 * line needs no configuration loaded.
 */
export function knowledgeLoadOptions(config?: TackConfig): LoadOptions {
  return {
    cacheDir: join((config?.paths ?? resolvePaths()).stateDir, 'indexes'),
    onWarning: (warning) => warn(warning.message),
  };
}

async function loadBundles(options: KnowledgeOptions): Promise<KnowledgeBundle[]> {
  const load = knowledgeLoadOptions();
  return Promise.all((await bundleRoots(options)).map((ref) => loadBundleRef(ref, load)));
}

/** `tack knowledge lint [bundle...]`: conformance errors (exit 1) and warnings, per bundle. */
export async function knowledgeLintCommand(options: KnowledgeOptions): Promise<number> {
  const bundles = await loadBundles(options);
  const now = Date.now();
  if (options.json) {
    printJson(
      bundles.map((b) => ({
        bundle: b.name,
        root: b.root,
        conformant: b.conformant,
        okfVersion: b.okfVersion ?? null,
        errors: b.errors,
        warnings: b.issues.length - b.errors,
        issues: b.issues,
        concepts: [...b.concepts.values()].map((c) => ({
          id: c.id,
          type: c.type,
          trust: c.trust,
          status: c.status,
          stale: isStale(c, now),
          staleAfter: c.staleAfter ?? null,
          generated: c.generated ?? null,
          verified: c.verified,
        })),
      })),
    );
  } else {
    for (const b of bundles) {
      for (const issue of b.issues) print(formatKnowledgeIssue(issue, b.name));
      const warnings = b.issues.length - b.errors;
      print(
        `${b.conformant ? 'conformant' : 'NOT conformant'}: ${bundleSummary(b, now)}; ${b.errors} errors, ${warnings} warnings`,
      );
    }
  }
  return bundles.some((b) => !b.conformant) ? 1 : 0;
}

export interface KnowledgeIndexOptions extends KnowledgeOptions {
  /** Write the changes; without it the command only shows them. */
  write?: boolean;
}

/**
 * `tack knowledge index [bundle...] [--write]`: the index.md files as the generator would leave them (planIndexes:
 * only the lines between its markers are its own). Without --write, prints a unified diff per file and writes
 * nothing: exit 0 when every index is current, 1 when something would change (as `git diff --exit-code`, so a CI
 * job can check indexes). With --write, writes the changed files; exit 0.
 */
export async function knowledgeIndexCommand(options: KnowledgeIndexOptions): Promise<number> {
  // Every bundle is planned before anything is written: a broken marker in one leaves all of them as they were.
  const plans: Array<{ bundle: KnowledgeBundle; plan: IndexPlan }> = [];
  for (const bundle of await loadBundles(options)) plans.push({ bundle, plan: await planIndexes(bundle) });
  const results: Array<{ bundle: KnowledgeBundle; plan: IndexPlan; written: string[] }> = [];
  for (const { bundle, plan } of plans)
    results.push({ bundle, plan, written: options.write ? await applyIndexPlan(plan) : [] });
  const shown = (root: string, path: string) =>
    relative(process.cwd(), join(root, path)).split(sep).join('/');
  const diffOf = (root: string, file: IndexFilePlan) =>
    createTwoFilesPatch(
      file.before === undefined ? '/dev/null' : shown(root, file.path),
      shown(root, file.path),
      file.before ?? '',
      file.after,
      file.before === undefined ? '' : 'now',
      options.write ? 'written' : 'with --write',
    );
  for (const { bundle, plan } of results)
    for (const issue of plan.warnings)
      warn(`${bundle.name}/${issue.file}${issue.line ? `:${issue.line}` : ''}: ${issue.message}`);
  if (options.json) {
    printJson(
      results.map(({ bundle, plan, written }) => ({
        bundle: bundle.name,
        root: bundle.root,
        write: options.write === true,
        files: plan.files.map((f) => ({
          path: f.path,
          status: !f.changed ? 'unchanged' : f.before === undefined ? 'new' : 'changed',
          ...(f.changed ? { diff: diffOf(bundle.root, f) } : {}),
        })),
        written,
        warnings: plan.warnings,
      })),
    );
  } else {
    for (const { bundle, plan, written } of results) {
      const changed = plan.files.filter((f) => f.changed);
      if (options.write) {
        print(
          written.length > 0
            ? `${bundle.name}: wrote ${written.join(', ')}`
            : `${bundle.name}: ${plan.files.length} index files up to date`,
        );
        continue;
      }
      for (const file of changed) print(diffOf(bundle.root, file));
      printErr(
        changed.length > 0
          ? `${bundle.name}: ${changed.length} of ${plan.files.length} index files would change; nothing was written (run with --write to write them)\n`
          : `${bundle.name}: ${plan.files.length} index files up to date\n`,
      );
    }
  }
  const pending = results.some(({ plan }) => plan.files.some((f) => f.changed));
  return !options.write && pending ? 1 : 0;
}

/** `tack knowledge show <id>`: a concept exactly as read_concept gives it to the model. */
export async function knowledgeShowCommand(id: string, options: KnowledgeOptions): Promise<number> {
  const base = new KnowledgeBase(await loadBundles(options));
  const { bundle, concept } = base.resolve(id);
  if (options.json) {
    const { text: _text, keyLines: _lines, ...rest } = concept;
    printJson({
      bundle: bundle.name,
      ...rest,
      stale: isStale(concept),
      links: bundle.outlinks(concept.id),
      backlinks: bundle.backlinks(concept.id),
    });
  } else print(renderConcept(bundle, concept));
  return 0;
}

export interface KnowledgeSearchOptions extends KnowledgeOptions {
  k?: number;
  type?: string;
  minTrust?: string;
}

/** `tack knowledge search <query>`: what search_knowledge returns, with scores under --json. */
export async function knowledgeSearchCommand(
  query: string,
  options: KnowledgeSearchOptions,
): Promise<number> {
  if (options.minTrust !== undefined && !isTrustTier(options.minTrust))
    throw new TackError(
      'USAGE',
      `--min-trust must be one of ${TRUST_TIERS.join(', ')}, got "${options.minTrust}"`,
    );
  const base = new KnowledgeBase(await loadBundles(options));
  const hits = base.search(query, {
    ...(options.k ? { k: options.k } : {}),
    ...(options.type ? { type: options.type } : {}),
    ...(isTrustTier(options.minTrust) ? { minTrust: options.minTrust } : {}),
  });
  if (options.json) printJson(hits);
  else print(formatHits(query, hits));
  return 0;
}

/** `tack knowledge verify <id> --by human:<id>`: records a verification, leaving the rest of the file as it was. */
export async function knowledgeVerifyCommand(
  id: string,
  options: KnowledgeOptions & { by: string; at?: string },
): Promise<number> {
  const base = new KnowledgeBase(await loadBundles(options));
  const { bundle, concept } = base.resolve(id);
  const verified = await recordVerification(bundle.root, concept, {
    by: options.by,
    ...(options.at ? { at: options.at } : {}),
  });
  const after = (await loadBundle(bundle.root, { ...knowledgeLoadOptions(), name: bundle.name })).require(
    concept.id,
  );
  if (options.json) printJson({ id: concept.id, verified, trust: after.trust });
  else print(`${bundle.name}/${concept.id}: verified by ${options.by}; trust now ${after.trust}`);
  return 0;
}

export interface KnowledgeRunOptions extends KnowledgeOptions {
  /** `name=value`, typed by the computation's declared parameters. */
  param?: string[];
  sqlite?: string;
  postgres?: string;
}

/**
 * `tack knowledge run <id> --param year=2026`: runs an Attested Computation as run_computation does and prints
 * the attested value; exit 1 when the run is refused (its value is not printed).
 */
export async function knowledgeRunCommand(id: string, options: KnowledgeRunOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const load = knowledgeLoadOptions(config);
  const base = new KnowledgeBase(
    await Promise.all((await bundleRoots(options, config)).map((ref) => loadBundleRef(ref, load))),
  );
  const { concept } = base.resolve(id);
  const declared = new Map(concept.computation?.parameters.map((p) => [p.name, parameterType(p)]) ?? []);
  const values: Record<string, unknown> = {};
  for (const pair of options.param ?? []) {
    const cut = pair.indexOf('=');
    if (cut <= 0) throw new TackError('USAGE', `--param expects name=value, got "${pair}"`);
    const name = pair.slice(0, cut);
    values[name] = cliValue(pair.slice(cut + 1), declared.get(name));
  }
  const runtimes = await openRuntimes(runtimeSettings(options, config));
  try {
    const outcome = await runNamedComputation(base, runtimes, id, values).catch((error: unknown) => {
      throw forCommandLine(error, declared, concept.computation?.runtime);
    });
    if (options.json) printJson(outcomeJson(outcome));
    else print(formatOutcome(outcome));
    return outcome.status === 'attested' ? 0 : 1;
  } finally {
    await runtimes.close();
  }
}

/**
 * The library words its hints for a caller of the API or the run_computation tool (`{"year": 2026}`, "configure
 * an executor"); on the command line they name the flag and the tack.json key instead. Same code and message.
 */
function forCommandLine(
  error: unknown,
  declared: ReadonlyMap<string, ParameterType | undefined>,
  runtime: string | undefined,
): unknown {
  if (!TackError.isInstance(error)) return error;
  const reworded = (hint: string) =>
    new TackError(error.code, error.message, {
      subject: error.subject,
      details: error.details,
      hint,
      cause: error,
    });
  const path = error.subject.path ?? '';
  if (error.code === 'COMPUTATION_INPUT' && path.startsWith('parameters.')) {
    const name = path.slice('parameters.'.length);
    const type = declared.get(name);
    if (type) {
      const example = JSON.parse(exampleValue(type)) as string | number | boolean;
      return reworded(`Pass -p ${name}=${String(example)} (${type}).`);
    }
  }
  // A runtime the concept names but nothing was opened for (its own "no runtime" error has no runtime to name).
  if (error.code === 'COMPUTATION_FAILED' && path === 'runtime' && runtime) {
    if (runtime === 'sqlite')
      return reworded(
        'Pass --sqlite <database file>, or set knowledge.runtimes.sqlite.database in tack.json.',
      );
    if (runtime === 'postgres')
      return reworded(
        `Pass --postgres <url>, set $${POSTGRES_URL_ENV}, or set knowledge.runtimes.postgres.url in tack.json.`,
      );
  }
  return error;
}

/** An outcome as `--json` prints it: a refused run without the receipt it kept for audit, so without its value. */
function outcomeJson(outcome: ComputationOutcome): Omit<ComputationOutcome, 'rejectedReceipt'> {
  if (outcome.status === 'attested') return outcome;
  const { rejectedReceipt: _withheld, ...shown } = outcome;
  return shown;
}

/** A command-line value as the declared type wants it: numbers and booleans parsed, everything else a string. */
function cliValue(text: string, type: ParameterType | undefined): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (type === 'boolean' && /^(true|false)$/.test(text)) return text === 'true';
  return text;
}

/** `tack knowledge graph [bundle...] [--format mermaid|dot] [--files]`: the link graph as text, or --json. */
export async function knowledgeGraphCommand(
  options: KnowledgeOptions & { format?: string; files?: boolean },
): Promise<number> {
  const format = (options.format ?? 'mermaid') as GraphFormat;
  if (format !== 'mermaid' && format !== 'dot')
    throw new TackError('USAGE', `--format must be mermaid or dot, got "${options.format}"`);
  const bundles = await loadBundles(options);
  const graphOptions = { includeFiles: options.files === true };
  if (options.json) printJson(bundles.map((b) => graphJson(b, graphOptions)));
  else for (const b of bundles) print(renderGraph(b, format, graphOptions));
  return 0;
}

/** `tack knowledge init --from <docs> --out <bundle> [--force]`: a draft bundle, one concept per document. */
export async function knowledgeInitCommand(
  options: GlobalOptions & { from: string; out: string; force?: boolean },
): Promise<number> {
  const result = await generateBundle({
    from: options.from,
    out: options.out,
    force: options.force === true,
  });
  const bundle = await loadBundle(options.out);
  if (options.json)
    printJson({ ...result, errors: bundle.errors, warnings: bundle.issues.length - bundle.errors });
  else {
    for (const skipped of result.skipped) print(`skipped ${skipped.file}: ${skipped.reason}`);
    print(
      `${options.out}: ${result.concepts} concepts (status draft, unverified, generated by process:tack-knowledge-init), ` +
        `${result.written.length - result.concepts} index files; lint: ${bundle.errors} errors, ${bundle.issues.length - bundle.errors} warnings`,
    );
  }
  return bundle.conformant ? 0 : 1;
}
