import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { errorMessage, TackError } from '../errors.js';

/** What `tack init` did with each file: written, or left as it was. */
export interface InitFile {
  file: string;
  action: 'written' | 'kept';
  /** Why a file was kept, or what the written one is for. */
  note: string;
}

export interface InitProjectOptions {
  /** The folder to set up (default `process.cwd()`): tack.json goes here, whatever is above it. */
  cwd?: string;
}

/**
 * Writes a starter project: tack.json (its `$schema` and an empty `mcpServers`) and an AGENTS.md stub. A file
 * that exists is never touched; CLAUDE.md counts as the guidelines file (tack reads either).
 */
export function initProject(options: InitProjectOptions = {}): InitFile[] {
  const dir = resolve(options.cwd ?? process.cwd());
  const out: InitFile[] = [];
  const tackJson = join(dir, 'tack.json');
  if (existsSync(tackJson)) out.push({ file: tackJson, action: 'kept', note: 'exists; left as it is' });
  else {
    const config = { $schema: schemaReference(dir), mcpServers: {} };
    create(tackJson, `${JSON.stringify(config, null, 2)}\n`);
    out.push({ file: tackJson, action: 'written', note: 'add servers with `tack mcp add`' });
  }
  const agents = join(dir, 'AGENTS.md');
  const claude = join(dir, 'CLAUDE.md');
  if (existsSync(agents)) out.push({ file: agents, action: 'kept', note: 'exists; left as it is' });
  else if (existsSync(claude))
    out.push({
      file: claude,
      action: 'kept',
      note: 'tack reads CLAUDE.md as the guidelines; no AGENTS.md added',
    });
  else {
    create(agents, AGENTS_STUB);
    out.push({ file: agents, action: 'written', note: 'guidelines for the agent: fill it in' });
  }
  return out;
}

const AGENTS_STUB = `# Guidelines

<!-- What an agent working in this project should know: how to build and run the tests, the conventions the
code follows, what not to touch. tack's agent (tack run, tack chat) reads this file, as other agents do. -->
`;

/** Written exclusively (`wx`): a file that appeared since the check is kept, not replaced. */
function create(file: string, text: string): void {
  try {
    writeFileSync(file, text, { flag: 'wx' });
  } catch (error) {
    throw new TackError('CONFIG_UNREADABLE', `${file}: cannot write (${errorMessage(error)})`, {
      subject: { file },
      hint: 'Check that the folder is writable.',
      cause: error,
    });
  }
}

/**
 * The `$schema` tack.json points at, for editors' completion and checks. tack's schema has no published URL, so
 * it is the file this installed package ships (schema/tack.schema.json): a relative path when the package lies
 * inside the project (a local install in node_modules: it works on every clone), else a file:// URL (a global
 * install: a path inside the project's node_modules would point at nothing). The file:// form names this
 * machine's install; a teammate's editor without it just goes without completion.
 */
export function schemaReference(projectDir: string): string {
  const schema = join(packageRoot(), 'schema', 'tack.schema.json');
  const rel = relative(resolve(projectDir), schema);
  if (rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel))
    return `./${rel.split(sep).join('/')}`;
  return pathToFileURL(schema).href;
}

/** The folder of tack's package.json, found from this module whether it runs from src/ (tests) or dist/src/. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'schema', 'tack.schema.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('schema/tack.schema.json not found above this module');
    dir = parent;
  }
  return dir;
}
