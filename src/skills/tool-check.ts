import { realpathSync, statSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import leven from 'leven';
import type { Catalog } from '../mcp/catalog.js';
import { sanitizeToolName } from '../mcp/names.js';
import { pushAll } from '../util/arrays.js';
import { canonicalJson, sha256Hex } from '../util/canonical-json.js';
import { readFrontMatter } from '../util/front-matter.js';
import { isRecord } from '../util/is-record.js';
import { readPrefix } from './bounded-read.js';
import { findReferences } from './references.js';
import { SKILL_FILE } from './skill.js';
import { findServerToolMentions, findToolMentions, type ToolMention } from './tool-mentions.js';

/**
 * A skill's dependencies on the tool catalog (tool-mentions.ts finds them): each tool it names must be in the
 * catalog, each argument it names must be in that tool's input schema, and the schema must be the one the
 * skill was pinned with. Only what the catalog can answer is checked: the tools of a server that is not
 * connected are one warning for the server, not one per tool.
 */
export type ToolFindingRule = 'missing-tool' | 'unknown-argument' | 'tool-changed';

/** One thing a skill says about a tool that the live catalog does not bear out, with where the skill says it. */
export interface ToolFinding {
  rule: ToolFindingRule;
  file: string;
  line: number;
  /** The tool as the skill names it. */
  tool: string;
  message: string;
}

/** What the check needs of the catalog: the connected servers and their tools under model-visible names. */
export interface ToolCatalogView {
  servers: readonly string[];
  tools: ReadonlyArray<{ name: string; inputSchema?: unknown }>;
}

/**
 * Where the schemas a skill was pinned with are kept: the pins (store/pins.ts), as kind `skill-tool` under the
 * skill's identity. Each record holds the skill's SHA-256 and the tool's input schema when the skill was pinned.
 */
export interface SkillToolPins {
  /** The record of `name` (a tool) pinned with the skill `identity`, if any. */
  get(
    identity: string,
    kind: string,
    name: string,
  ): Promise<{ sha256: string; definition: string } | undefined>;
  /** Records the tools' schemas as the skill's pins (when the skill is pinned, or pinned anew). */
  write(
    writes: ReadonlyArray<{
      identity: string;
      kind: string;
      name: string;
      op: 'approve';
      sha256: string;
      definition: string;
    }>,
  ): Promise<unknown>;
}

export const SKILL_TOOL_PIN = 'skill-tool';

/** The identity a skill's pins are kept under (agent.ts pins each SKILL.md read from disk with it). */
export function skillPinIdentity(dir: string): string {
  return `skill ${dir}`;
}

/** The host's catalog as the check reads it: the servers that answered, and their tools' input schemas. */
export function toolCatalogView(catalog: Catalog): ToolCatalogView {
  return {
    servers: catalog.servers.map((s) => s.server),
    tools: catalog.tools.map((t) => ({ name: t.name, inputSchema: t.definition.inputSchema })),
  };
}

/** The skill as the check reads it: its folder, SKILL.md, body and its pin. */
export interface SkillForToolCheck {
  dir: string;
  file: string;
  body: string;
  bodyLine: number;
  /** The pins' identity of the skill (`skill <dir>`). */
  identity: string;
  /** SHA-256 of the SKILL.md the pin approved; with `pins`, schemas are compared and recorded under it. */
  sha256?: string;
}

export interface ToolCheckOptions {
  pins?: SkillToolPins;
  /** Record the schemas of a skill pinned anew (the session start does; `tack skills validate` only reads). */
  record?: boolean;
}

const DOCUMENT = /\.(md|markdown|mdx)$/i;
const MAX_DOCUMENTS = 50;
const MAX_DOCUMENT_BYTES = 256 * 1024;

/** Every tool mention of the skill: its body's, then those of the Markdown files the body references. */
export async function skillToolMentions(
  skill: Pick<SkillForToolCheck, 'dir' | 'file' | 'body' | 'bodyLine'>,
  servers: readonly string[] = [],
): Promise<Array<ToolMention & { file: string }>> {
  const mentionsIn = (text: string, firstLine: number) =>
    [
      ...findToolMentions(text, firstLine),
      ...findServerToolMentions(
        text,
        firstLine,
        servers,
        (server, tool) => sanitizeToolName(server, tool).name,
      ),
    ].sort((a, b) => a.line - b.line);
  const out = mentionsIn(skill.body, skill.bodyLine).map((m) => ({ ...m, file: skill.file }));
  const root = safeRealpath(skill.dir);
  const seen = new Set<string>();
  // Only Markdown files are read for tool names: a body naming none needs no reference scan.
  const refs = /\.(md|markdown|mdx)\b/i.test(skill.body) ? findReferences(skill.body, skill.bodyLine) : [];
  for (const ref of refs) {
    const path = posix.normalize(ref.path);
    if (!DOCUMENT.test(path) || path === SKILL_FILE || path.startsWith('../') || seen.has(path)) continue;
    seen.add(path);
    if (seen.size > MAX_DOCUMENTS) break;
    const file = join(skill.dir, path);
    // The skill's own regular files only: a symlink out of its folder is not read, nor a FIFO.
    const real = safeRealpath(file);
    if (!root || !real?.startsWith(root + sep) || !isFile(real)) continue;
    const { bytes } = await readPrefix(file, MAX_DOCUMENT_BYTES).catch(() => ({ bytes: Buffer.alloc(0) }));
    for (const m of mentionsIn(bytes.toString('utf8'), 1)) out.push({ ...m, file });
  }
  return out;
}

/**
 * Checks a skill's dependencies on the catalog: every tool its SKILL.md and referenced Markdown name, the arguments
 * named next to each, and each schema against the one pinned with the skill (`options.pins`). No findings: every
 * dependency holds, or the skill names no tool.
 */
export async function checkSkillTools(
  skill: SkillForToolCheck,
  catalog: ToolCatalogView,
  options: ToolCheckOptions = {},
): Promise<ToolFinding[]> {
  const mentions = await skillToolMentions(skill, catalog.servers);
  if (mentions.length === 0) return [];
  const findings: ToolFinding[] = [];
  const tools = new Map(catalog.tools.map((t) => [t.name, t]));
  const connected = new Set(catalog.servers);
  const absentServers = new Map<string, Array<ToolMention & { file: string }>>();
  const checked = new Map<string, { line: number; file: string }>();
  for (const mention of mentions) {
    const tool = tools.get(mention.name);
    if (!tool) {
      if (!connected.has(mention.server)) {
        const list = absentServers.get(mention.server) ?? [];
        list.push(mention);
        absentServers.set(mention.server, list);
        continue;
      }
      if (findings.some((f) => f.rule === 'missing-tool' && f.tool === mention.name)) continue;
      const near = closest(
        mention.name,
        catalog.tools.filter((t) => t.name.startsWith(`mcp__${mention.server}__`)).map((t) => t.name),
      );
      findings.push({
        rule: 'missing-tool',
        file: mention.file,
        line: mention.line,
        tool: mention.name,
        message:
          `Tool ${mention.name} is not in the catalog: server '${mention.server}' has no tool '${mention.tool}'` +
          (near ? `; the closest is ${near}` : ''),
      });
      continue;
    }
    if (!checked.has(mention.name)) checked.set(mention.name, { line: mention.line, file: mention.file });
    const properties = schemaProperties(tool.inputSchema);
    if (!properties) continue;
    for (const arg of mention.args) {
      if (properties.has(arg.name)) continue;
      if (
        findings.some(
          (f) =>
            f.rule === 'unknown-argument' && f.tool === mention.name && f.message.includes(`'${arg.name}'`),
        )
      )
        continue;
      const near = closest(arg.name, [...properties.keys()]);
      findings.push({
        rule: 'unknown-argument',
        file: mention.file,
        line: arg.line,
        tool: mention.name,
        message:
          `Tool ${mention.name} has no argument '${arg.name}'` +
          (near
            ? `; the closest is '${near}'`
            : `; its arguments: ${[...properties.keys()].join(', ') || 'none'}`),
      });
    }
  }
  for (const [server, list] of absentServers) {
    const names = [...new Set(list.map((m) => m.name))];
    findings.push({
      rule: 'missing-tool',
      file: list[0]!.file,
      line: list[0]!.line,
      tool: names[0]!,
      message: `Server '${server}' is not connected (not configured, or it failed to start): ${names.join(', ')} cannot be checked`,
    });
  }
  if (options.pins && skill.sha256) {
    pushAll(findings, await compareWithPins(skill, checked, tools, options.pins, options.record === true));
  }
  // In reading order: SKILL.md first, then each file as the body names it, each by line.
  const files = [...new Set(mentions.map((m) => m.file))];
  return findings.sort((a, b) => files.indexOf(a.file) - files.indexOf(b.file) || a.line - b.line);
}

/**
 * The session start's check of one pinned skill: `text` is the SKILL.md just approved, whose schemas are recorded
 * at first sight and compared afterwards.
 */
export async function skillToolFindings(
  skill: { dir: string; file: string },
  text: string,
  catalog: ToolCatalogView,
  pins: SkillToolPins,
): Promise<ToolFinding[]> {
  const { body, bodyLine } = readFrontMatter(text);
  return checkSkillTools(
    {
      dir: skill.dir,
      file: skill.file,
      body,
      bodyLine,
      identity: skillPinIdentity(skill.dir),
      sha256: sha256Hex(text),
    },
    catalog,
    { pins, record: true },
  );
}

/**
 * The session start's notices: one per skill whose tools do not match, however many it names (the start says it
 * once, not at every step). A few skills at a time: their referenced files are read, and the reads overlap.
 */
export async function skillToolNotices(
  skills: ReadonlyArray<{ skill: { name: string; dir: string; file: string }; text: string }>,
  catalog: ToolCatalogView,
  pins: SkillToolPins,
): Promise<string[]> {
  const notices: string[] = [];
  for (let i = 0; i < skills.length; i += 16) {
    const batch = skills.slice(i, i + 16);
    const results = await Promise.all(
      batch.map(({ skill, text }) => skillToolFindings(skill, text, catalog, pins)),
    );
    batch.forEach(({ skill }, k) => {
      const findings = results[k]!;
      if (findings.length === 0) return;
      notices.push(
        `skill ${skill.name} names tools the catalog does not match: ` +
          `${findings.map((f) => `${f.message} (${f.file}:${f.line})`).join('; ')}; \`tack skills validate --servers\` lists them`,
      );
    });
  }
  return notices;
}

/** The schemas the skill was pinned with against today's; records those of a skill pinned anew. */
async function compareWithPins(
  skill: SkillForToolCheck,
  checked: ReadonlyMap<string, { line: number; file: string }>,
  tools: ReadonlyMap<string, { name: string; inputSchema?: unknown }>,
  pins: SkillToolPins,
  record: boolean,
): Promise<ToolFinding[]> {
  const findings: ToolFinding[] = [];
  const writes: Parameters<SkillToolPins['write']>[0][number][] = [];
  for (const [name, where] of checked) {
    const schema = tools.get(name)?.inputSchema ?? {};
    const definition = canonicalJson({ skill: skill.sha256, inputSchema: schema });
    const pinned = await pins.get(skill.identity, SKILL_TOOL_PIN, name);
    const before = pinned ? parsePinned(pinned.definition) : undefined;
    // A skill pinned anew (first sight, or its SKILL.md re-approved) is pinned with today's schemas.
    if (!before || before.skill !== skill.sha256) {
      if (record)
        writes.push({
          identity: skill.identity,
          kind: SKILL_TOOL_PIN,
          name,
          op: 'approve',
          sha256: sha256Hex(definition),
          definition,
        });
      continue;
    }
    if (canonicalJson(before.inputSchema) === canonicalJson(schema)) continue;
    const changes = describeSchemaChange(before.inputSchema, schema);
    findings.push({
      rule: 'tool-changed',
      file: where.file,
      line: where.line,
      tool: name,
      message: `Tool ${name}'s input schema changed since the skill was pinned: ${changes.join('; ')}`,
    });
  }
  if (writes.length > 0) await pins.write(writes);
  return findings;
}

function parsePinned(definition: string): { skill: unknown; inputSchema: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(definition);
    return typeof value === 'object' && value !== null && 'skill' in value
      ? (value as { skill: unknown; inputSchema: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A schema's top-level properties, or undefined when it cannot say which names are allowed: no properties
 * listed, or other names let through (`additionalProperties` true or a schema). Branches of
 * anyOf / oneOf / allOf add theirs.
 */
export function schemaProperties(schema: unknown): Map<string, unknown> | undefined {
  if (!isRecord(schema)) return undefined;
  const out = new Map<string, unknown>();
  let open = false;
  const visit = (node: Record<string, unknown>) => {
    if (isRecord(node.properties)) for (const [k, v] of Object.entries(node.properties)) out.set(k, v);
    const extra = node.additionalProperties;
    if (extra === true || isRecord(extra) || isRecord(node.patternProperties)) open = true;
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      const list = node[key];
      if (Array.isArray(list)) for (const branch of list) if (isRecord(branch)) visit(branch);
    }
  };
  visit(schema);
  return open || out.size === 0 ? undefined : out;
}

/** What changed between two input schemas, in words: parameters added, removed, renamed, retyped, required. */
export function describeSchemaChange(before: unknown, after: unknown): string[] {
  const old = propertiesOf(before);
  const now = propertiesOf(after);
  const removed = [...old.keys()].filter((k) => !now.has(k));
  const added = [...now.keys()].filter((k) => !old.has(k));
  const changes: string[] = [];
  // One gone and one new of the same type is a rename as the skill sees it: its name no longer works.
  if (
    removed.length === 1 &&
    added.length === 1 &&
    typeOf(old.get(removed[0]!)) === typeOf(now.get(added[0]!))
  ) {
    changes.push(`parameter '${removed[0]}' renamed to '${added[0]}'`);
  } else {
    for (const name of removed) changes.push(`parameter '${name}' removed`);
    for (const name of added) changes.push(`parameter '${name}' added`);
  }
  for (const [name, schema] of now) {
    if (!old.has(name)) continue;
    const [was, is] = [typeOf(old.get(name)), typeOf(schema)];
    if (was !== is) changes.push(`parameter '${name}' type ${was} -> ${is}`);
  }
  const [wasRequired, isRequired] = [requiredOf(before), requiredOf(after)];
  for (const name of isRequired)
    if (!wasRequired.has(name) && old.has(name)) changes.push(`parameter '${name}' now required`);
  for (const name of wasRequired)
    if (!isRequired.has(name) && now.has(name)) changes.push(`parameter '${name}' no longer required`);
  if (changes.length === 0) changes.push('descriptions or constraints changed');
  return changes;
}

function propertiesOf(schema: unknown): Map<string, unknown> {
  return isRecord(schema) && isRecord(schema.properties)
    ? new Map(Object.entries(schema.properties))
    : new Map();
}

function requiredOf(schema: unknown): Set<string> {
  return new Set(
    isRecord(schema) && Array.isArray(schema.required)
      ? schema.required.filter((r): r is string => typeof r === 'string')
      : [],
  );
}

function typeOf(schema: unknown): string {
  if (!isRecord(schema)) return 'any';
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.join('|');
  if (Array.isArray(schema.enum)) return 'enum';
  return 'any';
}

/** The closest name within a third of its length (at least 3 edits), when there is one. */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of names) {
    const distance = leven(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best && best.distance <= Math.max(3, Math.floor(name.length / 3)) ? best.name : undefined;
}

function safeRealpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
