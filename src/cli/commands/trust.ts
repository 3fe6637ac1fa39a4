import { resolve } from 'node:path';
import { type ProjectReview, reviewProject, trustReviewedProject } from '../../agent/project-review.js';
import { projectTrustScope } from '../../config/apply-trust.js';
import { loadConfig } from '../../config/load.js';
import { findProjectRoot } from '../../config/paths.js';
import { TackError } from '../../errors.js';
import {
  compareProjectFiles,
  type FileChange,
  listTrustedProjects,
  projectFiles,
  revokeProjectTrust,
  TRUST_PROJECT_ENV,
} from '../../security/project-trust.js';
import { openConfiguredStore } from '../../store/open.js';
import type { TackStore } from '../../store/store.js';
import { isDirectory } from '../../util/fs-probe.js';
import { print, printJson, questions, table } from '../output.js';
import { cliStoreLocation, type GlobalOptions } from '../with-host.js';

export interface TrustOptions extends GlobalOptions {
  list?: boolean;
  revoke?: boolean;
  /** Trust without asking (scripts, CI). */
  yes?: boolean;
  /** Show what would be trusted and record nothing. */
  dryRun?: boolean;
}

/**
 * `tack trust [dir]`: shows what the project would run (reviewProject: its servers with their command lines, hooks,
 * allow rules, skills, the files covered), asks "Trust this project? [y/N]" on a terminal, then records the hash
 * of every file shown (trustReviewedProject). `--yes` trusts without asking, `--dry-run` only shows; without a
 * terminal and without either it refuses (USAGE, exit 2). Exit 0 when trusted, already trusted, shown by
 * --dry-run, or nothing to trust; 1 when the answer is no or the project cannot be trusted (a bound reached).
 * `--list` shows the trusted projects and whether their files changed; `--revoke` forgets one.
 */
export async function trustCommand(dir: string | undefined, options: TrustOptions): Promise<number> {
  if (options.config)
    throw new TackError('USAGE', '`tack trust` trusts a project folder, not a --config file', {
      hint: 'A file named with --config is trusted already: you chose it. Run `tack trust [dir]` for a project.',
    });
  const modes = [
    options.list && '--list',
    options.revoke && '--revoke',
    options.yes && '--yes',
    options.dryRun && '--dry-run',
  ];
  const given = modes.filter((m): m is string => typeof m === 'string');
  if (given.length > 1)
    throw new TackError('USAGE', `${given.join(' and ')} do not go together`, {
      hint: 'Run `tack trust --dry-run` to see what would be trusted, `tack trust --yes` to trust without asking, `tack trust --list` to see the projects, `tack trust --revoke <dir>` to forget one.',
    });
  const cwd = resolve(dir ?? process.cwd());
  if (!options.list && !isDirectory(cwd))
    throw new TackError('USAGE', `${cwd}: not a folder`, {
      hint: 'Give the project folder: `tack trust <dir>`.',
    });
  if (options.json && !options.list && !options.revoke && !options.yes && !options.dryRun)
    throw new TackError('USAGE', '`tack trust --json` cannot ask whether to trust', {
      hint: 'Add --dry-run to get what would be trusted as JSON, or --yes to trust it and get what was recorded.',
    });
  const store = await openConfiguredStore(cliStoreLocation(options));
  try {
    if (options.list) return await list(store, options);
    if (options.revoke) return await revoke(store, cwd, options);
    return await trust(store, cwd, options);
  } finally {
    await store.close();
  }
}

async function trust(store: TackStore, cwd: string, options: TrustOptions): Promise<number> {
  const review = await reviewProject({ cwd, records: store.trustedProjects });
  const fileCount = Object.keys(review.files).length;
  if (fileCount === 0) {
    if (options.json) printJson({ ...review, recorded: false });
    else
      print(
        `Nothing to trust in ${review.root}: no tack.json, .mcp.json or project skills (.agents/skills, .claude/skills).`,
      );
    return 0;
  }
  const mustAsk = !options.yes && !options.dryRun && !review.trusted && !review.problem;
  if (mustAsk && process.stdin.isTTY !== true)
    throw new TackError(
      'USAGE',
      `${review.root}: trusting a project needs a yes, and stdin is not a terminal`,
      {
        hint: 'Run `tack trust` in a terminal to be asked, `tack trust --dry-run` to see what would be trusted, or `tack trust --yes` to trust it without asking (scripts, CI).',
      },
    );
  if (!options.json) printReview(review);
  if (review.problem) {
    const error = new TackError(
      'PROJECT_UNTRUSTED',
      `${review.root}: cannot trust this project: ${review.problem}`,
      {
        subject: { file: review.root },
        hint: `Move large or generated files out of the skill folders, or set ${TRUST_PROJECT_ENV}=1 where the checkout is trusted as a whole.`,
      },
    );
    if (!options.dryRun) throw error;
    if (options.json) printJson({ ...review, recorded: false });
    else print(`\nCannot be trusted: ${review.problem}.`);
    return 1;
  }
  if (review.trusted || options.dryRun) {
    if (options.json) printJson({ ...review, recorded: false });
    else
      print(
        review.trusted
          ? `\nAlready trusted (${review.previous!.trustedAt}); no file changed since. Nothing recorded.`
          : '\nDry run: nothing recorded. `tack trust` asks, `tack trust --yes` trusts without asking.',
      );
    return 0;
  }
  if (!options.yes && !(await confirm('\nTrust this project? [y/N] '))) {
    print('Not trusted; nothing recorded.');
    return 1;
  }
  const record = await trustReviewedProject(store.trustedProjects, review);
  if (options.json) {
    printJson({ ...review, trusted: true, recorded: true, trustedAt: record.trustedAt });
    return 0;
  }
  print(
    `\nTrusted: ${fileCount} file${fileCount === 1 ? '' : 's'} recorded. A file added, changed or removed makes tack ask again; \`tack trust --revoke\` forgets the project.`,
  );
  return 0;
}

/** The review as sections; empty sections are left out. */
function printReview(review: ProjectReview): void {
  const changes = review.previous?.changes ?? [];
  const kindOf = new Map(changes.map((c) => [c.path, c.kind]));
  const state = !review.previous
    ? 'never trusted'
    : changes.length === 0
      ? `trusted ${review.previous.trustedAt}`
      : `trusted ${review.previous.trustedAt}, changed since: ${changes.map((c) => `${c.path} (${c.kind})`).join(', ')}`;
  print(`Project ${review.root} (${state})`);
  const files = Object.keys(review.files).sort();
  section(`Files trust covers (${files.length})`, [
    ...files.map((file) => (review.previous ? [file, kindOf.get(file) ?? 'unchanged'] : [file])),
    ...changes.filter((c) => c.kind === 'removed').map((c) => [c.path, 'removed']),
  ]);
  section(
    'Servers (they start as these commands)',
    review.servers.map((s) => [
      s.name,
      s.transport,
      [
        s.command ?? s.url ?? '',
        ...(s.cwd ? [`(in ${s.cwd})`] : []),
        ...(s.env.length > 0 ? [`(env: ${s.env.join(', ')})`] : []),
        ...(s.headers.length > 0 ? [`(headers: ${s.headers.join(', ')})`] : []),
        ...(s.enabled ? [] : ['(disabled in the file)']),
      ].join(' '),
      s.file,
    ]),
  );
  section(
    'Hooks (shell lines run around tool calls)',
    review.hooks.map((h) => [h.event, h.matcher ?? '*', h.command]),
  );
  section(
    'Allow rules (approve tool calls without asking)',
    review.allow.map((rule) => [rule]),
  );
  section(
    'Skills (instructions to the model, with their scripts)',
    review.skills.map((s) => [s.name, s.folder]),
  );
}

/** Asks on the terminal; anything but y or yes, or stdin closing, is a no. */
async function confirm(question: string): Promise<boolean> {
  const rl = questions();
  try {
    const answer = await new Promise<string>((resolveAnswer) => {
      rl.onClose(() => resolveAnswer(''));
      rl.ask(question).then(resolveAnswer, () => resolveAnswer(''));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

async function revoke(store: TackStore, cwd: string, options: TrustOptions): Promise<number> {
  let root: string;
  try {
    root = loadConfig({ cwd }).projectRoot;
  } catch {
    // A broken file must not keep the user from withdrawing trust.
    root = findProjectRoot(cwd);
  }
  const removed = await revokeProjectTrust(store.trustedProjects, root);
  if (options.json) printJson({ root, revoked: removed });
  else
    print(
      removed
        ? `Forgot ${root}: its servers, hooks, allow rules and skills wait for \`tack trust\` again.`
        : `${root} was not trusted.`,
    );
  return 0;
}

interface ListedProject {
  root: string;
  trustedAt: string;
  files: number;
  state: 'unchanged' | 'changed' | 'missing';
  changes: FileChange[];
}

async function list(store: TackStore, options: TrustOptions): Promise<number> {
  const rows: ListedProject[] = (await listTrustedProjects(store.trustedProjects)).map((record) => {
    const base = { root: record.root, trustedAt: record.trustedAt, files: Object.keys(record.files).length };
    if (!isDirectory(record.root)) return { ...base, state: 'missing', changes: [] };
    let scope: ReturnType<typeof projectTrustScope>;
    try {
      scope = projectTrustScope(loadConfig({ cwd: record.root }), record.root);
    } catch {
      // An invalid file still has a hash: compare what can be compared.
      scope = { root: record.root, cwd: record.root };
    }
    const changes = compareProjectFiles(record.files, projectFiles({ ...scope, root: record.root }));
    return { ...base, state: changes.length > 0 ? 'changed' : 'unchanged', changes };
  });
  if (options.json) {
    printJson(rows);
    return 0;
  }
  if (rows.length === 0) {
    print('No trusted projects. Run `tack trust` in a project to trust it.');
    return 0;
  }
  print(
    table(
      ['ROOT', 'TRUSTED AT', 'FILES', 'STATE'],
      rows.map((r) => [
        r.root,
        r.trustedAt,
        String(r.files),
        r.state === 'changed'
          ? `changed: ${r.changes.map((c) => `${c.path} (${c.kind})`).join(', ')}`
          : r.state,
      ]),
    ),
  );
  return 0;
}

function section(title: string, rows: string[][]): void {
  if (rows.length === 0) return;
  print(`\n${title}:`);
  for (const line of table(
    rows[0]!.map(() => ''),
    rows,
  )
    .split('\n')
    .slice(1))
    print(`  ${line}`);
}
