import { configTarget } from '../../config/edit.js';
import {
  type FoundServers,
  findImportableServers,
  type ImportOutcome,
  importServers,
  parseImportSources,
} from '../../config/import.js';
import { initProject } from '../../config/init.js';
import { TackError } from '../../errors.js';
import { isTerminal, print, printJson, questions, table, warn } from '../output.js';
import type { GlobalOptions } from '../with-host.js';

export interface InitOptions extends GlobalOptions {
  /** `claude-desktop,cursor,...` or `all`. */
  import?: string;
  /** Import every server found without asking. */
  yes?: boolean;
  /** Replace servers of the same name in tack.json. */
  force?: boolean;
}

/**
 * `tack init [--import <sources> | --yes] [--force]`: a starter tack.json and AGENTS.md in the current folder
 * (never over a file that exists), then the servers other hosts have configured: listed, and imported into
 * tack.json when named with --import, all with --yes, or chosen one file at a time on a terminal.
 */
export async function initCommand(options: InitOptions): Promise<number> {
  if (options.config)
    throw new TackError('USAGE', '`tack init` sets up the current folder, not a --config file', {
      hint: 'Run it in the project folder, without --config.',
    });
  const selected = options.import === undefined ? undefined : parseImportSources(options.import);
  const files = initProject();
  const found = findImportableServers();
  const importable = found.filter((f) => !f.readByTack && f.servers.some((s) => s.entry));
  let chosen: FoundServers[] = [];
  if (selected) chosen = importable.filter((f) => selected.includes(f.source));
  else if (options.yes) chosen = importable;

  if (!options.json) {
    for (const file of files)
      print(`${file.action === 'written' ? 'Wrote' : 'Kept'} ${file.file}: ${file.note}`);
    showFound(found);
  }
  if (!selected && !options.yes && importable.length > 0) {
    if (!options.json && process.stdin.isTTY === true && isTerminal('stderr')) chosen = await ask(importable);
    else if (!options.json) {
      const sources = [...new Set(importable.map((f) => f.source))].join(',');
      print(`\nTo import them into tack.json: tack init --import ${sources} (or --import all).`);
    }
  }
  const target = configTarget('tack');
  const outcome: ImportOutcome =
    chosen.length > 0
      ? importServers(chosen, target, { force: options.force === true })
      : { added: [], replaced: [], refused: [], warnings: [], duplicates: [] };
  if (options.json) {
    printJson({
      files,
      found,
      imported: {
        file: target.file,
        added: outcome.added,
        replaced: outcome.replaced,
        refused: outcome.refused.map((r) => ({ name: r.name, message: r.error.message, hint: r.error.hint })),
        duplicates: outcome.duplicates,
      },
      warnings: outcome.warnings,
    });
    return outcome.refused.length > 0 ? 1 : 0;
  }
  for (const message of outcome.warnings) warn(message);
  for (const d of outcome.duplicates) warn(`"${d.name}" of ${d.file} not imported: the one of ${d.kept} was`);
  for (const { name, error } of outcome.refused) {
    warn(`"${name}" not imported: ${error.message}`);
    for (const line of error.details) warn(`  ${line}`);
    if (error.hint) warn(`  ${error.hint}`);
  }
  if (outcome.added.length + outcome.replaced.length > 0) {
    const names = [...outcome.added, ...outcome.replaced].map((n) => `"${n}"`).join(', ');
    print(
      `\nImported ${names} into ${target.file}. \`tack servers\` connects to them once you \`tack trust\` the project.`,
    );
  } else if (chosen.length === 0 && importable.length === 0 && !found.some((f) => f.error))
    print(
      '\nNext: tack mcp add <name> -- <command> [args...], or tack mcp add --transport http <name> <url>.',
    );
  return outcome.refused.length > 0 ? 1 : 0;
}

function showFound(found: readonly FoundServers[]): void {
  if (found.length === 0) {
    print('\nNo servers found in the files of Claude Desktop, Claude Code, Cursor, VS Code or Codex.');
    return;
  }
  print('\nServers other hosts have configured:');
  for (const source of found) {
    const tail = source.readByTack ? ' (tack reads this file as it is; nothing to import)' : '';
    print(`\n${source.label} [${source.source}]: ${source.file}${tail}`);
    if (source.error) {
      print(`  not read: ${source.error}`);
      continue;
    }
    const rows = source.servers.map((server) => {
      const entry = server.entry ?? {};
      const what =
        typeof entry.url === 'string'
          ? entry.url
          : [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])]
              .filter((part): part is string => typeof part === 'string')
              .join(' ');
      const notes = [...(server.problem ? [`cannot import: ${server.problem}`] : []), ...server.notes];
      return [server.name, server.entry ? what : '', notes.join('; ')];
    });
    for (const line of table(['', '', ''], rows).split('\n').slice(1)) print(`  ${line}`);
  }
}

/** One question per file; anything but y or yes, or stdin closing, is a no. */
async function ask(importable: readonly FoundServers[]): Promise<FoundServers[]> {
  const rl = questions();
  const chosen: FoundServers[] = [];
  try {
    for (const source of importable) {
      const count = source.servers.filter((s) => s.entry).length;
      const answer = await new Promise<string>((resolveAnswer) => {
        rl.onClose(() => resolveAnswer(''));
        rl.ask(
          `\nImport ${count} server${count === 1 ? '' : 's'} from ${source.label} (${source.file})? [y/N] `,
        ).then(resolveAnswer, () => resolveAnswer(''));
      });
      if (/^y(es)?$/i.test(answer.trim())) chosen.push(source);
    }
  } finally {
    rl.close();
  }
  return chosen;
}
