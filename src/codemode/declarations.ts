import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';
import type { ApiBinding } from './runtime.js';

/**
 * The typed API of a catalog for code mode: TypeScript declarations of `mcp.<server>.<tool>(args)`, generated
 * from each tool's input and output schemas, with the descriptions as doc comments. Identifiers are made safe
 * (letters, digits, `_`, `$`; not a reserved word) and unique per server. Sizes are bounded: a description is cut
 * to its first paragraph and DESCRIPTION_CHARS, a schema's type to TYPE_DEPTH levels and TYPE_CHARS characters
 * (past either, `Record<string, unknown>` / `unknown`), so one hostile definition cannot blow up the declarations.
 */

/** One tool as code mode sees it: the call name the pipeline routes, and its definition. */
export interface ApiTool {
  /** The model-visible name the pipeline runs (`mcp__server__tool`). */
  name: string;
  server: string;
  /** The server's own name for it: the identifier is made from this. */
  toolName: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
}

/** One server's part of the API: its identifier, and the declarations of its tools. */
export interface ServerApi {
  server: string;
  identifier: string;
  /** The tool identifiers, to the name the call is routed under. */
  tools: Record<string, string>;
  /** `declare namespace` text for this server: what code_api answers. */
  declarations: string;
  /** Each tool's identifier and result shape, in the server's order: what the system prompt carries. */
  signatures: Signature[];
  /** sha256 of the definitions it was generated from. */
  digest: string;
}

/** A tool as the system prompt names it: its identifier and, when it declares an output schema, a result shape. */
export interface Signature {
  id: string;
  /**
   * The result's shape: its top level typed, objects below it as `object` (their fields are the ones the tools'
   * own arguments and descriptions name; code_api has the whole type), `object` when still long.
   */
  result?: string;
}

const DESCRIPTION_CHARS = 300;
/** A result shape in the system prompt stays under this; past it, `object` (code_api has the whole). */
const RESULT_CHARS = 160;
/** In a result shape, objects nested deeper than this are `object`. */
const SHAPE_OBJECT_DEPTH = 1;
const TYPE_DEPTH = 5;
const TYPE_CHARS = 1_500;
const CACHE_ENTRIES = 256;

const RESERVED = new Set(
  'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await async of constructor prototype __proto__'.split(
    ' ',
  ),
);

/** A safe identifier from any name: invalid characters to `_`, a digit or reserved word prefixed with `_`. */
export function safeIdentifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (id === '' || /^[0-9]/.test(id) || RESERVED.has(id)) id = `_${id}`;
  return id;
}

/** Unique identifiers for `names`, in order: a collision gets `_2`, `_3`, ... */
function uniqueIdentifiers(names: readonly string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    const base = safeIdentifier(name);
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    return id;
  });
}

/** Declarations by the digest of the definitions they came from (a catalog change makes new ones). */
const cache = new Map<string, ServerApi>();

/**
 * Each server's API, in the order the servers first appear; cached by the digest of each server's definitions
 * (and its identifier), so a step re-reading an unchanged catalog costs one hash per server.
 */
export function serverApis(tools: readonly ApiTool[]): ServerApi[] {
  const byServer = new Map<string, ApiTool[]>();
  for (const tool of tools) {
    const list = byServer.get(tool.server) ?? [];
    list.push(tool);
    byServer.set(tool.server, list);
  }
  const servers = [...byServer.keys()];
  const identifiers = uniqueIdentifiers(servers);
  return servers.map((server, i) => {
    const identifier = identifiers[i]!;
    const list = byServer.get(server)!;
    const digest = createHash('sha256')
      .update(
        canonicalJson([
          identifier,
          list.map((t) => [t.name, t.toolName, t.description, t.inputSchema, t.outputSchema ?? null]),
        ]),
      )
      .digest('hex');
    const cached = cache.get(digest);
    if (cached) {
      // Most recently used last: the oldest entry goes first when the cache is full.
      cache.delete(digest);
      cache.set(digest, cached);
      return cached;
    }
    const api = generate(server, identifier, list, digest);
    cache.set(digest, api);
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    return api;
  });
}

/**
 * What a script gets back from each tool, in a line per server, for a model that has the same tools as direct
 * tools (their arguments and descriptions are in those definitions, so none is repeated here; code_api has the
 * full declarations). Tools are grouped by result (`text`, or the declared type); the group whose tools'
 * names are longest is the server's default, said once without them, and the others follow by tool.
 */
export function compactApi(apis: readonly ServerApi[]): string {
  return apis
    .map((api) => {
      const groups = new Map<string, string[]>();
      for (const s of api.signatures) {
        const result = s.result ?? 'text';
        groups.set(result, [...(groups.get(result) ?? []), s.id]);
      }
      const listed = [...groups].map(([result, ids]) => ({ result, ids: ids.join(', ') }));
      // The default group goes without its tools' names: the one with the longest names saves the most.
      const main = listed.reduce((best, g) => (g.ids.length > best.ids.length ? g : best), listed[0]!);
      const rest = listed.filter((g) => g !== main).map((g) => `; ${g.ids} → ${g.result}`);
      return `mcp.${api.identifier} → ${main.result}${rest.join('')}`;
    })
    .join('\n');
}

/** The binding the runtime builds `mcp` from. */
export function apiBinding(apis: readonly ServerApi[]): ApiBinding {
  return Object.fromEntries(apis.map((api) => [api.identifier, api.tools]));
}

function generate(server: string, identifier: string, tools: readonly ApiTool[], digest: string): ServerApi {
  const ids = uniqueIdentifiers(tools.map((t) => t.toolName));
  const lines = [
    `/** The tools of the MCP server "${comment(server)}". */`,
    `declare namespace mcp.${identifier} {`,
  ];
  const routes: Record<string, string> = {};
  const signatures: Signature[] = [];
  tools.forEach((tool, i) => {
    const id = ids[i]!;
    routes[id] = tool.name;
    const shape =
      tool.outputSchema === undefined ? undefined : schemaType(tool.outputSchema, 0, SHAPE_OBJECT_DEPTH);
    signatures.push({
      id,
      // A declared result too long for the line is still an object, not text.
      ...(tool.outputSchema === undefined
        ? {}
        : { result: shape !== undefined && shape.length <= RESULT_CHARS ? shape : 'object' }),
    });
    const input = schemaType(tool.inputSchema, 0) ?? 'Record<string, unknown>';
    const output =
      tool.outputSchema === undefined ? 'string' : (schemaType(tool.outputSchema, 0) ?? 'unknown');
    const doc = summary(tool.description);
    if (doc) lines.push(`  /** ${doc} */`);
    lines.push(`  function ${id}(args: ${input}): Promise<${output}>;`);
  });
  lines.push('}');
  return { server, identifier, tools: routes, declarations: lines.join('\n'), signatures, digest };
}

/** The first paragraph of a description, cut, made safe inside a doc comment. */
function summary(description: string): string {
  const first = description.trim().split(/\n\s*\n/)[0] ?? '';
  const flat = first.replace(/\s+/g, ' ');
  return comment(flat.length > DESCRIPTION_CHARS ? `${flat.slice(0, DESCRIPTION_CHARS - 1)}…` : flat);
}

function comment(text: string): string {
  return text.replace(/\*\//g, '*\\/');
}

/**
 * A TypeScript type for a JSON Schema, or undefined when it is too deep or too long to be worth sending. The walk
 * is bounded by its visits, not only by its depth: a list of types (`"type": ["object", "object", ...]`) walks
 * what is below it once per entry, so a 2 KB schema could ask for 40^5 walks (minutes, then a string too long
 * for the engine). Every visit adds a character to the text or two (`{}`, `null`, a name and `: `), so a walk past
 * twice TYPE_CHARS visits could only give a text past TYPE_CHARS: it stops there.
 */
function schemaType(schema: unknown, depth: number, shapeDepth?: number): string | undefined {
  const budget: Budget = { visits: 2 * TYPE_CHARS, shapeDepth };
  const text = typeOf(schema, depth, budget);
  return budget.visits < 0 || text.length > TYPE_CHARS ? undefined : text;
}

/** Visits left to a walk; below zero, it was cut short. */
interface Budget {
  visits: number;
  /**
   * Set for a result shape: properties go without their descriptions, and objects below this depth are `object`.
   * Unset for the full declarations.
   */
  shapeDepth: number | undefined;
}

function typeOf(schema: unknown, depth: number, budget: Budget): string {
  if (--budget.visits < 0) return 'unknown';
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'unknown';
  if (depth > TYPE_DEPTH) return 'unknown';
  const s = schema as Record<string, unknown>;
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.length <= 50)
    return s.enum.map(literal).join(' | ');
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0 && options.length <= 20)
      return union(options.map((o) => paren(typeOf(o, depth + 1, budget))));
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0 && s.allOf.length <= 10)
    return s.allOf.map((o) => paren(typeOf(o, depth + 1, budget))).join(' & ');
  const type = s.type;
  if (Array.isArray(type))
    return union(type.map((t) => paren(typeOf({ ...s, type: t }, depth, budget)))) || 'unknown';
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(s.items, depth + 1, budget)}>`;
    case 'object':
      return objectType(s, depth, budget);
    default:
      return s.properties ? objectType(s, depth, budget) : 'unknown';
  }
}

function objectType(s: Record<string, unknown>, depth: number, budget: Budget): string {
  if (budget.shapeDepth !== undefined && depth > budget.shapeDepth) return 'object';
  const properties =
    s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {};
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r) => typeof r === 'string') : []);
  const fields: string[] = [];
  for (const key in properties) {
    if (!Object.hasOwn(properties, key)) continue;
    if (budget.visits < 0) break; // the text is past TYPE_CHARS already: the rest would be thrown away
    const value = properties[key];
    const name = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
    const description =
      budget.shapeDepth === undefined &&
      value &&
      typeof value === 'object' &&
      typeof (value as { description?: unknown }).description === 'string'
        ? summary((value as { description: string }).description).slice(0, 120)
        : '';
    fields.push(
      `${description ? `/** ${description} */ ` : ''}${name}${required.has(key) ? '' : '?'}: ${typeOf(value, depth + 1, budget)}`,
    );
  }
  const extra = s.additionalProperties;
  if (fields.length === 0)
    return extra === false
      ? '{}'
      : `Record<string, ${extra && typeof extra === 'object' ? typeOf(extra, depth + 1, budget) : 'unknown'}>`;
  if (extra && typeof extra === 'object') fields.push(`[key: string]: unknown`);
  return `{ ${fields.join('; ')} }`;
}

function literal(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? 'unknown' : json;
}

/** A union without repeats (a result shape can make `object | object` of two different objects). */
function union(types: readonly string[]): string {
  return [...new Set(types)].join(' | ');
}

function paren(type: string): string {
  return /[|&]/.test(type) && !/^[{(]/.test(type) ? `(${type})` : type;
}
