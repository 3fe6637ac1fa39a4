import { basename, sep } from 'node:path';
import { projectSkillsTrusted } from '../../config/apply-trust.js';
import type { TackConfig } from '../../config/load.js';
import { TackError } from '../../errors.js';
import type { McpHost } from '../../mcp/host.js';
import { ToolSearchIndex } from '../../search/tool-index.js';
import { discoverSkills, scopeRoots } from '../../skills/discover.js';
import { invalidText, renderEntry, type SkillLibrary } from '../../skills/library.js';
import { loadSkills } from '../../skills/load.js';
import { formatScriptResult, runSkillScript } from '../../skills/scripts.js';
import { readSkill } from '../../skills/skill.js';
import { toolCatalogView } from '../../skills/tool-check.js';
import {
  formatIssue,
  type SkillIssue,
  validatePaths,
  validateSkill,
  verdictOf,
} from '../../skills/validate.js';
import { countTokens } from '../../tokens/count.js';
import { print, printJson, questions, table, truncate, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig, withHost } from '../with-host.js';

export interface SkillsOptions extends GlobalOptions {
  trustProject?: boolean;
  /** Also the skills of the configured MCP servers (connects to them). */
  servers?: boolean;
  contextWindow?: number;
  budget?: number;
}

/** Loads the library the way the harness will, printing its warnings; `fn` runs while servers are connected. */
async function withLibrary<T>(
  options: SkillsOptions,
  fn: (library: SkillLibrary, config: TackConfig) => Promise<T>,
): Promise<T> {
  const run = async (config: TackConfig, host?: McpHost) => {
    const library = await loadSkills({
      trustProject: options.trustProject,
      config,
      ...(host ? { host } : {}),
    });
    for (const warning of library.warnings) warn(warning);
    return fn(library, config);
  };
  return options.servers
    ? withHost(options, undefined, (host, _signal, config) => run(config, host))
    : run(await loadCliConfig(options));
}

/** Tier 1 at the budget the options give (--budget, or 1 % of --context-window). */
function renderIndex(library: SkillLibrary, options: SkillsOptions) {
  return library.renderIndex({
    countTokens,
    ...(options.budget ? { budgetTokens: options.budget } : {}),
    ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}),
  });
}

/** `tack skills list`: what tier 1 costs per skill, what each body and its files would cost, and the arithmetic. */
export async function skillsListCommand(options: SkillsOptions): Promise<number> {
  return withLibrary(options, async (library) => {
    const index = await renderIndex(library, options);
    const indexed = new Map(index.entries.map((e) => [e.name, e]));
    // One skill at a time: every file of every skill is read, and thousands at once would exhaust descriptors.
    const rows = [];
    for (const skill of library.skills) {
      const body = await library.activate(skill.name);
      const files = skill.remote ? [] : body.files;
      let fileTokens = 0;
      for (const file of files.filter((f) => f !== 'SKILL.md')) {
        const read = await library.readFile(skill.name, file).catch(() => undefined);
        if (read && !read.binary) fileTokens += await countTokens(read.text);
      }
      const issues = skill.remote ? [] : await validateSkill(await readSkill(skill.dir), { countTokens });
      const entry = indexed.get(skill.name);
      rows.push({
        name: skill.name,
        scope: skill.scope,
        path: skill.file,
        tokens: {
          // A skill left out of the index is shown with what its entry would cost.
          index: entry?.tokens ?? (await countTokens(renderEntry(skill, skill.description))),
          body: await countTokens(body.text),
          files: fileTokens,
        },
        files: files.length,
        valid: true,
        errors: issues.filter((i) => i.severity === 'error').length,
        warnings: issues.filter((i) => i.severity === 'warning').length,
        reasons: [] as string[],
        shortened: entry?.shortened ?? false,
        dropped: !entry,
      });
    }
    // Invalid skills are listed with the validator's reasons and cost nothing: they are not offered.
    for (const skill of library.invalid) {
      const issues = await validateSkill(await readSkill(skill.dir), { countTokens });
      rows.push({
        name: skill.name,
        scope: skill.scope,
        path: skill.file,
        tokens: { index: 0, body: 0, files: 0 },
        files: 0,
        valid: false,
        errors: issues.filter((i) => i.severity === 'error').length,
        warnings: issues.filter((i) => i.severity === 'warning').length,
        reasons: skill.errors.map((e) => e.message),
        shortened: false,
        dropped: false,
      });
    }
    const arithmetic = {
      indexTokens: index.tokens,
      budgetTokens: index.budgetTokens,
      allBodiesTokens: rows.reduce((sum, row) => sum + row.tokens.body, 0),
      allFilesTokens: rows.reduce((sum, row) => sum + row.tokens.files, 0),
    };
    if (options.json) {
      printJson({
        tokenizer: 'qwen3',
        skills: rows,
        index: { ...arithmetic, shortened: index.shortened, dropped: index.dropped },
      });
      return 0;
    }
    if (rows.length === 0) {
      print(
        'No skills found. Skills live in .agents/skills/<name>/SKILL.md (project, once trusted: tack trust),',
      );
      print('~/.agents/skills (user), or folders listed under "skills" in tack.json.');
      return 0;
    }
    print(
      table(
        ['SKILL', 'SCOPE', 'INDEX', 'BODY', 'FILES', 'ISSUES', 'PATH'],
        rows.map((row) => [
          row.name +
            (!row.valid ? ' (invalid)' : row.dropped ? ' (dropped)' : row.shortened ? ' (shortened)' : ''),
          row.scope,
          String(row.tokens.index),
          String(row.tokens.body),
          `${row.tokens.files} (${row.files})`,
          row.errors || row.warnings ? `${row.errors}E ${row.warnings}W` : '-',
          row.path,
        ]),
      ),
    );
    print('');
    for (const skill of library.invalid) print(`${invalidText(skill)} (tack skills validate ${skill.dir}).`);
    if (library.invalid.length > 0) print('');
    print(
      `Every turn: the index costs ${arithmetic.indexTokens} tokens (budget ${arithmetic.budgetTokens}); ` +
        `every body loaded up front would cost ${arithmetic.allBodiesTokens}` +
        (arithmetic.indexTokens > 0
          ? ` (${(arithmetic.allBodiesTokens / arithmetic.indexTokens).toFixed(1)}x the index)`
          : '') +
        `; every body and every file, ${arithmetic.allBodiesTokens + arithmetic.allFilesTokens}.`,
    );
    const summary = indexSummary(index, library.skills.length);
    if (summary) print(`${summary[0]!.toUpperCase()}${summary.slice(1)}.`);
    print('Tokens counted with the Qwen3 tokenizer; BODY is what activate_skill returns.');
    return 0;
  });
}

/** `tack skills index`: tier 1 exactly as the model gets it. */
export async function skillsIndexCommand(options: SkillsOptions): Promise<number> {
  return withLibrary(options, async (library) => {
    const index = await renderIndex(library, options);
    // One line, however many skills: naming 9,972 left-out skills helps nobody (--json has the lists).
    const summary = indexSummary(index, library.skills.length);
    if (summary) warn(summary);
    if (options.json) printJson(index);
    else print(index.text);
    return 0;
  });
}

/** `tack skills show <name>`: tier 2 exactly as activate_skill returns it. */
export async function skillsShowCommand(name: string, options: SkillsOptions): Promise<number> {
  return withLibrary(options, async (library) => {
    const skill = library.require(name);
    const { text } = await library.activate(name);
    if (options.json) printJson({ ...skill, remote: undefined, text, tokens: await countTokens(text) });
    else print(text);
    return 0;
  });
}

/** `tack skills validate [path...]`: exit 1 when any error, 0 with warnings only. */
export async function skillsValidateCommand(
  paths: readonly string[],
  options: SkillsOptions & { strict?: boolean },
): Promise<number> {
  let targets = paths;
  if (targets.length === 0) {
    // Every skill discovery finds, also those the library leaves out for a missing name or description:
    // those are the ones to explain.
    const config = await loadCliConfig(options);
    const discovery = await discoverSkills({
      trustProject: options.trustProject === true || projectSkillsTrusted(config),
      configFolders: config.skillFolders,
    });
    for (const warning of discovery.warnings) warn(warning);
    targets = discovery.skills.map((s) => s.source.dir);
    if (targets.length === 0) {
      const roots = scopeRoots({ configFolders: config.skillFolders }).map((r) => r.dir);
      print(`No skills found in: ${roots.join(', ')}`);
      return 0;
    }
  }
  const validate = { strict: options.strict, countTokens };
  // With --servers, the tools each skill names are checked against the live catalog and the pinned schemas.
  const result = options.servers
    ? await withHost(options, undefined, async (host) =>
        validatePaths(targets, {
          ...validate,
          tools: {
            catalog: toolCatalogView(host.catalog),
            ...(host.store ? { pins: host.store.pins } : {}),
          },
        }),
      )
    : await validatePaths(targets, validate);
  for (const warning of result.warnings) warn(warning);
  const errors = result.issues.filter((i) => i.severity === 'error').length;
  const warnings = result.issues.length - errors;
  if (options.json) {
    const verdicts = result.skills.map((skill) => {
      const own = result.issues.filter((i) => i.file.startsWith(skill.dir + sep) && i.rule !== 'overlap');
      return { name: skill.name ?? basename(skill.dir), file: skill.file, ...verdictCounts(own) };
    });
    printJson({
      skills: result.skills.map((s) => s.file),
      verdicts,
      issues: result.issues,
      errors,
      warnings,
    });
  } else {
    for (const issue of result.issues) print(formatIssue(issue, process.cwd()));
    print(summary(result.skills.length, result.issues));
  }
  return errors > 0 ? 1 : 0;
}

/** A skill's verdict as the JSON shows it: valid unless an error, and the counts (validate.ts, verdictOf). */
function verdictCounts(issues: readonly SkillIssue[]) {
  const verdict = verdictOf(issues);
  return { valid: verdict.valid, errors: verdict.errors.length, warnings: verdict.warnings.length };
}

function summary(skills: number, issues: readonly SkillIssue[]): string {
  const errors = issues.filter((i) => i.severity === 'error').length;
  const warnings = issues.length - errors;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(skills, 'skill')} checked: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}.`;
}

/** `tack skills run <name> <script> [args...]`: tier 3 by hand, asking first as the harness would. */
export async function skillsRunCommand(
  name: string,
  script: string,
  args: readonly string[],
  options: SkillsOptions & { yes?: boolean; timeout?: number },
): Promise<number> {
  return withLibrary(options, async (library, config) => {
    const result = await runSkillScript(library.require(name), script, args, {
      ...(options.timeout ? { timeoutMs: options.timeout } : {}),
      sandbox: config.sandbox.skillScripts,
      approve: async (request) => {
        if (options.yes) return true;
        if (!process.stdin.isTTY) {
          throw new TackError(
            'SKILL_SCRIPT',
            `running ${script} needs approval and stdin is not a terminal`,
            {
              hint: 'Pass --yes to approve this run.',
            },
          );
        }
        const rl = questions();
        try {
          const answer = await rl.ask(
            `Run ${request.command.join(' ')} in ${request.cwd} (sandbox: ${request.sandbox})? [y/N] `,
          );
          return /^y(es)?$/i.test(answer.trim());
        } finally {
          rl.close();
        }
      },
    }).catch(async (error: unknown) => {
      throw await scriptErrorForCommandLine(error, library, name);
    });
    if (options.json) printJson(result);
    else print(formatScriptResult(script, result));
    return result.exitCode === 0 ? 0 : 1;
  });
}

/**
 * A script path that does not resolve: the library's hint speaks to the model (activate_skill); here the user
 * gets the skill's scripts and the command that shows the skill.
 */
async function scriptErrorForCommandLine(
  error: unknown,
  library: SkillLibrary,
  name: string,
): Promise<unknown> {
  if (!TackError.isInstance(error) || error.code !== 'SKILL_FILE') return error;
  const scripts = (await library.listFiles(name).catch(() => []))
    .filter((file) => file.startsWith('scripts/'))
    .map((file) => file.slice('scripts/'.length));
  const listed = scripts.length > 0 ? `Its scripts: ${scripts.join(', ')}.` : 'It has no scripts/ folder.';
  return new TackError(error.code, error.message, {
    subject: error.subject,
    details: error.details,
    hint: `${listed} \`tack skills show ${name}\` shows the skill and its files.`,
    cause: error,
  });
}

/**
 * What the budget did to tier 1, in one line: how many skills are in the index, how many descriptions were cut,
 * how many were left out and how they stay reachable. Nothing when all fit as written.
 */
export function indexSummary(
  index: {
    entries: readonly unknown[];
    shortened: readonly string[];
    dropped: readonly string[];
    budgetTokens: number;
  },
  total: number,
): string | undefined {
  if (index.shortened.length === 0 && index.dropped.length === 0) return undefined;
  const parts = [
    `${index.entries.length} of ${total} skills in the index (budget ${index.budgetTokens} tokens)`,
  ];
  if (index.shortened.length > 0) parts.push(`${index.shortened.length} descriptions shortened to fit`);
  if (index.dropped.length > 0)
    parts.push(
      `${index.dropped.length} left out of the index, reachable with search_skills in a session and \`tack skills search <query>\``,
    );
  return parts.join('; ');
}

/**
 * `tack skills search <query...>`: every installed skill (those left out of the index too) ranked as
 * search_skills ranks them; each argument is one query, merged by reciprocal rank fusion.
 */
export async function skillsSearchCommand(
  queries: readonly string[],
  options: SkillsOptions & { k?: number },
): Promise<number> {
  return withLibrary(options, async (library) => {
    const index = ToolSearchIndex.build(
      library.skills.map((s) => ({ server: s.scope, name: s.name, description: s.description })),
    );
    const hits = index.searchMany(queries, options.k ?? 10);
    const rows = hits.map((h) => ({
      name: h.tool.name,
      scope: h.tool.server,
      score: Math.round(h.score * 1000) / 1000,
      description: h.tool.description ?? '',
    }));
    if (options.json) printJson(rows);
    else if (rows.length === 0) print(`No skill matches ${queries.map((q) => `"${q}"`).join(', ')}.`);
    else
      print(
        table(
          ['SCORE', 'SKILL', 'SCOPE', 'DESCRIPTION'],
          rows.map((r) => [r.score.toFixed(3), r.name, r.scope, truncate(r.description, 70)]),
        ),
      );
    return 0;
  });
}
