import { readFileSync } from 'node:fs';
import { errorMessage, TackError } from '../errors.js';
import type { DefinitionKind, ScannableDefinition } from './catalog.js';

/**
 * What `tack scan --tools FILE` reads: exported definitions, as an array, or as `{servers?, tools?, prompts?,
 * resources?}`. Each definition names its `server` and `name`; a tool may carry `title`, `description`,
 * `inputSchema`, `outputSchema` and `annotations` as `tools/list` gives them; a prompt (`kind: "prompt"` in an
 * array, or under `prompts`) its `arguments`; a resource (`kind: "resource"`, or under `resources`) its `uri`,
 * `description` and `mimeType`. `servers.<name>.instructions` are scanned as that server's instructions. The
 * tools.json of `tack tools search` is a valid file.
 */
export interface DefinitionsFile {
  definitions: ScannableDefinition[];
  /** Server instructions by server. */
  instructions: Record<string, string>;
}

const KINDS: readonly DefinitionKind[] = ['tool', 'prompt', 'resource'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function invalid(file: string, message: string, path: string): TackError {
  return new TackError('USAGE', `${file}: ${message}`, {
    subject: { file, path },
    hint: 'an array of {server, name, kind?, title?, description?, inputSchema?, outputSchema?, annotations?, arguments?, uri?}, or {servers?, tools?, prompts?, resources?} (docs/security.md)',
  });
}

export function loadDefinitionsFile(file: string): DefinitionsFile {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TackError('USAGE', `cannot read ${file}: ${errorMessage(error)}`, { subject: { file } });
  }
  return parseDefinitions(file, data);
}

/** The definitions of a parsed file (see loadDefinitionsFile); `file` names it in errors. */
export function parseDefinitions(file: string, data: unknown): DefinitionsFile {
  const definitions: ScannableDefinition[] = [];
  const instructions: Record<string, string> = {};
  const take = (list: unknown, at: string, kind: DefinitionKind | undefined) => {
    if (list === undefined) return;
    if (!Array.isArray(list)) throw invalid(file, `"${at}" must be an array`, at);
    list.forEach((entry, i) => {
      definitions.push(definitionOf(file, entry, `${at}[${i}]`, kind));
    });
  };
  if (Array.isArray(data)) take(data, '', undefined);
  else if (isRecord(data)) {
    take(data.tools, 'tools', 'tool');
    take(data.prompts, 'prompts', 'prompt');
    take(data.resources, 'resources', 'resource');
    if (data.servers !== undefined) {
      if (!isRecord(data.servers)) throw invalid(file, '"servers" must be an object', 'servers');
      for (const [name, profile] of Object.entries(data.servers)) {
        if (!isRecord(profile)) throw invalid(file, `servers.${name}: expected an object`, `servers.${name}`);
        if (profile.instructions === undefined) continue;
        if (typeof profile.instructions !== 'string')
          throw invalid(
            file,
            `servers.${name}.instructions must be a string`,
            `servers.${name}.instructions`,
          );
        instructions[name] = profile.instructions;
      }
    }
  } else
    throw invalid(file, 'expected an array of definitions or {servers?, tools?, prompts?, resources?}', '');
  return { definitions, instructions };
}

function definitionOf(
  file: string,
  entry: unknown,
  at: string,
  implied: DefinitionKind | undefined,
): ScannableDefinition {
  const where = at.replace(/^\./, '');
  if (!isRecord(entry)) throw invalid(file, `${where}: expected an object`, where);
  for (const key of ['server', 'name'] as const)
    if (typeof entry[key] !== 'string' || entry[key] === '')
      throw invalid(file, `${where}: "${key}" must be a non-empty string`, `${where}.${key}`);
  for (const key of ['title', 'description', 'uri', 'mimeType'] as const)
    if (entry[key] !== undefined && typeof entry[key] !== 'string')
      throw invalid(file, `${where}: "${key}" must be a string`, `${where}.${key}`);
  for (const key of ['inputSchema', 'outputSchema', 'annotations'] as const)
    if (entry[key] !== undefined && !isRecord(entry[key]))
      throw invalid(file, `${where}: "${key}" must be an object`, `${where}.${key}`);
  if (entry.arguments !== undefined && !Array.isArray(entry.arguments))
    throw invalid(file, `${where}: "arguments" must be an array`, `${where}.arguments`);
  const kind = entry.kind ?? implied ?? 'tool';
  if (!KINDS.includes(kind as DefinitionKind))
    throw invalid(file, `${where}: "kind" must be one of ${KINDS.join(', ')}`, `${where}.kind`);
  const definition: ScannableDefinition = {
    kind: kind as DefinitionKind,
    server: entry.server as string,
    name: entry.name as string,
  };
  if (typeof entry.title === 'string') definition.title = entry.title;
  if (typeof entry.description === 'string') definition.description = entry.description;
  if (typeof entry.uri === 'string') definition.uri = entry.uri;
  for (const key of ['inputSchema', 'outputSchema', 'annotations', 'arguments'] as const)
    if (entry[key] !== undefined) definition[key] = entry[key];
  return definition;
}
