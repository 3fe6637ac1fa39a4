/**
 * The public API of tack, as a text file per entry point (api/<entry>.api.txt): every exported name with its kind,
 * and, for functions, classes and interfaces, their signatures and public members. test/api.test.ts fails when the
 * code's surface differs from the committed files, so a change to what users can import is a visible diff;
 * `npm run api` writes the files anew after an intended change.
 *
 * Hand-written on the TypeScript compiler API rather than api-extractor: api-extractor wants a build of .d.ts
 * rollups and its own config per entry; a listing of names and signatures is all the check needs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository: the nearest folder above this file with a package.json (scripts/ from source, dist/scripts built). */
const REPO = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith('/dist')) {
    const up = dirname(dir);
    if (up === dir) throw new Error('api-report: no package.json above the script');
    dir = up;
  }
  return dir;
})();

/** The entry points package.json exports, by the name a user imports. */
export const ENTRIES: Record<string, string> = {
  tack: 'src/index.ts',
  'tack/servers': 'src/entries/servers.ts',
  'tack/knowledge': 'src/entries/knowledge.ts',
  'tack/skills': 'src/entries/skills.ts',
  'tack/security': 'src/entries/security.ts',
  'tack/search': 'src/entries/search.ts',
  'tack/console': 'src/entries/console.ts',
  'tack/tui': 'src/entries/tui.ts',
};

export function apiFileOf(entry: string): string {
  return join(REPO, 'api', `${entry.replace('/', '-')}.api.txt`);
}

/** One TypeScript program over the entries. */
export function apiProgram(): ts.Program {
  const config = ts.readConfigFile(join(REPO, 'tsconfig.json'), ts.sys.readFile).config;
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, REPO);
  const files = Object.values(ENTRIES).map((file) => join(REPO, file));
  return ts.createProgram(files, { ...parsed.options, noEmit: true });
}

/** Whether an entry exports the name as a type only (`export type { X }` or `export { type X }`). */
function typeOnly(exported: ts.Symbol): boolean {
  return (exported.declarations ?? []).some(
    (d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly),
  );
}

/** The names every entry exports, by entry name. */
export function exportedNames(program: ts.Program): Record<string, string[]> {
  const checker = program.getTypeChecker();
  return Object.fromEntries(
    Object.entries(ENTRIES).map(([entry, file]) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(join(REPO, file))!);
      return [entry, (module ? checker.getExportsOfModule(module) : []).map((symbol) => symbol.name).sort()];
    }),
  );
}

/** The report of every entry, by entry name. */
export function apiReports(program: ts.Program = apiProgram()): Record<string, string> {
  const checker = program.getTypeChecker();
  const flags = ts.TypeFormatFlags.NoTruncation;
  // Private and protected members are not part of what a user can call.
  const hiddenDeclaration = (d: ts.Declaration) =>
    (ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0;
  const hidden = (p: ts.Symbol) => (p.declarations ?? []).some(hiddenDeclaration);
  const out: Record<string, string> = {};
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(join(REPO, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (!source || !module) throw new Error(`${file}: not found or not a module`);
    const lines: string[] = [];
    for (const exported of checker.getExportsOfModule(module).sort((a, b) => a.name.localeCompare(b.name))) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const f = symbol.flags;
      const type = () =>
        checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, source), undefined, flags);
      const declared = () => checker.getDeclaredTypeOfSymbol(symbol);
      const members = (t: ts.Type) =>
        checker
          .getPropertiesOfType(t)
          .filter((p) => !p.name.startsWith('#') && !p.name.startsWith('__') && !hidden(p))
          .map(
            (p) =>
              `  ${p.name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(p, source), undefined, flags)}`,
          )
          .sort();
      if (f & ts.SymbolFlags.Class) {
        // A class exported as a type, or one whose constructor is private, is made by its factory only.
        const constructors = typeOnly(exported)
          ? []
          : checker
              .getTypeOfSymbolAtLocation(symbol, source)
              .getConstructSignatures()
              .filter((signature) => {
                const declaration = signature.getDeclaration() as ts.Declaration | undefined;
                return !declaration || !hiddenDeclaration(declaration);
              })
              .map((signature) => `  new ${checker.signatureToString(signature, undefined, flags)}`);
        lines.push(
          `class ${exported.name}${typeOnly(exported) ? ' (type only)' : ''}`,
          ...constructors,
          ...members(declared()),
        );
      } else if (f & ts.SymbolFlags.Interface) {
        lines.push(`interface ${exported.name}`, ...members(declared()));
        // An interface with a value of the same name (TackStore and its `open`): both are the API.
        if (f & ts.SymbolFlags.Variable && !typeOnly(exported))
          lines.push(`const ${exported.name}: ${type()}`);
      } else if (f & ts.SymbolFlags.TypeAlias) {
        lines.push(`type ${exported.name} = ${checker.typeToString(declared(), undefined, flags)}`);
      } else if (f & ts.SymbolFlags.Function) {
        lines.push(`function ${exported.name}: ${type()}`);
      } else if (f & ts.SymbolFlags.Enum) {
        lines.push(`enum ${exported.name}`);
      } else {
        lines.push(`const ${exported.name}: ${type()}`);
      }
    }
    out[entry] = `${lines.join('\n')}\n`;
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [entry, report] of Object.entries(apiReports())) {
    const file = apiFileOf(entry);
    mkdirSync(dirname(file), { recursive: true });
    const before = (() => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    })();
    writeFileSync(file, report);
    const names = new Set(report.split('\n').flatMap((line) => line.match(/^\w+ (\w+)/)?.[1] ?? []));
    const values = new Set(
      report.split('\n').flatMap(
        (line) =>
          line
            .match(/^(?:function|const|enum|class) (\w+)$|^(?:function|const) (\w+):/)
            ?.slice(1)
            .filter(Boolean) ?? [],
      ),
    );
    process.stdout.write(
      `${entry}: ${names.size} exports, ${values.size} of them values${before === report ? '' : ' (changed)'}\n`,
    );
  }
}
