import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { apiFileOf, apiProgram, apiReports, ENTRIES, publicSymbols } from '../scripts/api-report.js';
import { REPO } from './helpers/project.js';

const CLI = join(REPO, 'src', 'cli');

function cliFiles(dir = CLI): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? cliFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

// One program for both checks: building it is most of this file's time.
const program = apiProgram(cliFiles());

describe('the public API', () => {
  it('matches the committed listing of every entry (api/*.api.txt): run `npm run api` after an intended change', () => {
    const reports = apiReports(program);
    expect(Object.keys(reports).sort()).toEqual(Object.keys(ENTRIES).sort());
    for (const [entry, report] of Object.entries(reports)) {
      const committed = readFileSync(apiFileOf(entry), 'utf8');
      expect(report, `${entry}: the API differs from ${relative(REPO, apiFileOf(entry))}`).toBe(committed);
    }
  });

  it('leaves internals out of every entry', () => {
    const reports = Object.values(apiReports(program)).join('\n');
    for (const internal of [
      'openDatabase',
      'bindParameters',
      'canonicalSql',
      'decodeTags',
      'PinRecords',
      'bwrapArgs',
    ])
      expect(reports).not.toMatch(new RegExp(`^(class|function|const|interface|type) ${internal}\\b`, 'm'));
  });

  it('is all the CLI uses: every name src/cli imports from another layer (util/ aside) is exported by an entry', () => {
    const checker = program.getTypeChecker();
    const exported = publicSymbols(program);
    const internal: string[] = [];
    for (const file of cliFiles()) {
      const source = program.getSourceFile(file)!;
      const where = relative(REPO, file);
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
          const [specifier] = node.arguments;
          const target = specifier && ts.isStringLiteral(specifier) && resolve(dirname(file), specifier.text);
          // A lazy import of another layer loads it whole: only a public entry may be loaded lazily (tack/tui).
          if (target && !target.startsWith(`${CLI}/`) && !target.startsWith(join(REPO, 'src', 'entries')))
            internal.push(`${where}: import('${specifier.text}')`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      for (const statement of source.statements) {
        if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
        const from = statement.moduleSpecifier.text;
        // Packages, the CLI's own modules and the generic helpers in util/ are not tack's API.
        const target = resolve(dirname(file), from);
        if (
          !from.startsWith('.') ||
          target.startsWith(`${CLI}/`) ||
          target.startsWith(join(REPO, 'src', 'util'))
        )
          continue;
        const bindings = statement.importClause?.namedBindings;
        if (!bindings || !ts.isNamedImports(bindings)) {
          internal.push(`${where}: ${statement.getText(source)} (import names one by one)`);
          continue;
        }
        for (const element of bindings.elements) {
          const local = checker.getSymbolAtLocation(element.name);
          const symbol = local && checker.getAliasedSymbol(local);
          if (!symbol || !exported.has(symbol))
            internal.push(`${where}: ${(element.propertyName ?? element.name).text} from '${from}'`);
        }
      }
    }
    expect(
      internal,
      'export these from src/index.ts or an entry in src/entries/, or stop using them',
    ).toEqual([]);
  });
});
