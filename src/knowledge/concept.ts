import { type FrontMatter, readFrontMatter } from '../util/front-matter.js';
import { type ComputationContract, readComputationContract } from './computation.js';
import { IssueSink, type KnowledgeIssue } from './issues.js';
import { parseTimeValue, type TimeValue } from './time.js';
import { actorKind, type TrustTier, trustTier } from './trust-tier.js';

export const STATUSES = ['draft', 'stable', 'deprecated'] as const;
export type ConceptStatus = (typeof STATUSES)[number];
export const ATTESTED_COMPUTATION = 'Attested Computation';

/** One `sources` entry (§5.1): `resource` names an artifact (URL or path) or a scope descriptor. */
export interface ConceptSource {
  resource: string;
  id?: string;
  title?: string;
  author?: string;
  usageCount?: number;
  lastModified?: TimeValue;
}

export interface Actor {
  by: string;
  at?: TimeValue;
}

/**
 * A concept document as read: the spec's fields typed, plus everything as written. `data` holds the whole front
 * matter (unknown keys included) and `text` the file as read, so a writer changes only what it means to
 * (see edit.ts) and unknown keys round-trip byte for byte.
 */
export interface Concept {
  /** The path inside the bundle without `.md` (§2), `/` separated. */
  id: string;
  /** Bundle-relative file path (`tables/orders.md`). */
  path: string;
  type: string;
  /** `title`, or one derived from the file name. */
  title: string;
  description?: string;
  resource?: string;
  tags: string[];
  sources: ConceptSource[];
  generated?: Actor;
  /** A bare mapping is read as a list of one (§5.2). */
  verified: Actor[];
  /** Absent ⇒ stable (§5.4). */
  status: ConceptStatus;
  staleAfter?: TimeValue;
  trust: TrustTier;
  /** Set for `type: Attested Computation`. */
  computation?: ComputationContract;
  body: string;
  bodyLine: number;
  data: Record<string, unknown>;
  text: string;
  /** The file line of each top-level front matter key. */
  keyLines: ReadonlyMap<string, number>;
}

export interface ParsedConcept {
  /** Undefined when the file is not conformant (no parseable front matter or no `type`). */
  concept?: Concept;
  issues: KnowledgeIssue[];
}

/** Stale when `now >= stale_after` (§5.5); a bare date counts from its day's start in UTC. */
export function isStale(concept: Pick<Concept, 'staleAfter'>, now: number = Date.now()): boolean {
  const at = concept.staleAfter?.instant;
  return at !== undefined && now >= at;
}

/** The latest `verified[].at`: "how recently" a concept was confirmed. */
export function lastVerified(concept: Pick<Concept, 'verified'>): TimeValue | undefined {
  let latest: TimeValue | undefined;
  for (const v of concept.verified) {
    if (v.at?.instant !== undefined && (latest?.instant === undefined || v.at.instant > latest.instant))
      latest = v.at;
  }
  return latest;
}

/**
 * Reads a concept file. `fm` is its front matter as readFrontMatter gives it, when the caller has it already (a
 * cached load keeps it by the file's digest); the rest is always worked out here, from that and the path.
 */
export function parseConcept(
  path: string,
  text: string,
  fm: FrontMatter = readFrontMatter(text),
): ParsedConcept {
  const sink = new IssueSink(path);
  if (!fm.present) {
    sink.error(
      'front-matter-missing',
      'a concept must open with YAML front matter (--- lines) holding `type`',
    );
    return { issues: sink.issues };
  }
  if (fm.problems.length > 0) {
    for (const p of fm.problems) sink.error('front-matter-invalid', p.message, p.line);
    return { issues: sink.issues };
  }
  const data = fm.data;
  const line = (key: string) => fm.keyLines.get(key);
  // A number or boolean is a non-empty type all the same (§11 asks for no more); it is read as its text.
  const rawType = data.type;
  const type =
    typeof rawType === 'string'
      ? rawType.trim()
      : typeof rawType === 'number' || typeof rawType === 'boolean'
        ? String(rawType)
        : '';
  if (type !== '' && typeof rawType !== 'string')
    sink.warn('field-shape', `\`type\` should be a string; read as "${type}"`, line('type'));
  if (type === '') {
    sink.error(
      'type-missing',
      data.type === undefined ? 'front matter has no `type`' : '`type` must be a non-empty string',
      line('type') ?? 1,
    );
    return { issues: sink.issues };
  }
  const str = (key: string): string | undefined => {
    const value = data[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    sink.warn('field-shape', `\`${key}\` should be a string`, line(key));
    return undefined;
  };
  const time = (value: unknown, field: string, at: number | undefined): TimeValue | undefined => {
    const parsed = parseTimeValue(value);
    if (parsed?.form === 'invalid')
      sink.warn(
        'time-invalid',
        `\`${field}\` "${parsed.raw}" is neither a date nor an ISO 8601 datetime`,
        at,
      );
    if (parsed?.form === 'datetime-without-offset')
      sink.warn('time-offset', `\`${field}\` "${parsed.raw}" has no UTC offset; read as UTC`, at);
    return parsed;
  };
  const actor = (value: unknown, field: string, at: number | undefined): Actor | undefined => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      sink.warn('field-shape', `\`${field}\` should be a mapping { by, at }`, at);
      return undefined;
    }
    const entry = value as Record<string, unknown>;
    if (typeof entry.by !== 'string' || entry.by.trim() === '') {
      sink.warn('actor-missing', `\`${field}.by\` is required: an actor such as human:<id>`, at);
      return undefined;
    }
    checkActor(sink, entry.by, `${field}.by`, at);
    const when = time(entry.at, `${field}.at`, at);
    return { by: entry.by, ...(when ? { at: when } : {}) };
  };

  const tags = readTags(data.tags, sink, line('tags'));
  const generated =
    data.generated === undefined || data.generated === null
      ? undefined
      : actor(data.generated, 'generated', line('generated'));
  const verifiedRaw = data.verified;
  const verified: Actor[] = [];
  if (verifiedRaw !== undefined && verifiedRaw !== null) {
    const list = Array.isArray(verifiedRaw) ? verifiedRaw : [verifiedRaw];
    list.forEach((entry, i) => {
      const read = actor(entry, `verified[${i}]`, line('verified'));
      if (read) verified.push(read);
    });
  }
  let status: ConceptStatus = 'stable';
  const rawStatus = str('status')?.trim();
  if (rawStatus !== undefined) {
    const known = STATUSES.find((s) => s === rawStatus.toLowerCase());
    if (known) {
      status = known;
      // `Deprecated` read as stable would present retired content as current.
      if (known !== rawStatus)
        sink.warn(
          'status-unknown',
          `\`status\` "${rawStatus}" should be lower case; read as ${known}`,
          line('status'),
        );
    } else
      sink.warn(
        'status-unknown',
        `\`status\` "${rawStatus}" is not one of ${STATUSES.join(', ')}; read as stable`,
        line('status'),
      );
  }
  const staleAfter = time(data.stale_after, 'stale_after', line('stale_after'));
  if (data.usage_window !== undefined) readWindow(data.usage_window, 'usage_window', line('usage_window'));

  const concept: Concept = {
    id: path.replace(/\.md$/i, ''),
    path,
    type,
    title: str('title')?.trim() || titleFromPath(path),
    tags,
    sources: readSources(data.sources, sink, line('sources'), time, readWindow),
    verified,
    status,
    trust: trustTier(verified),
    body: fm.body,
    bodyLine: fm.bodyLine,
    data,
    text,
    keyLines: fm.keyLines,
  };
  const description = str('description')?.trim();
  if (description) concept.description = description;
  const resource = str('resource')?.trim();
  if (resource) concept.resource = resource;
  if (generated) concept.generated = generated;
  if (staleAfter) concept.staleAfter = staleAfter;
  if (type === ATTESTED_COMPUTATION) concept.computation = readComputationContract(concept, sink);
  return { concept, issues: sink.issues };

  function readWindow(value: unknown, field: string, at: number | undefined): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      sink.warn('field-shape', `\`${field}\` should be a mapping { from, to }`, at);
      return;
    }
    const w = value as Record<string, unknown>;
    time(w.from, `${field}.from`, at);
    time(w.to, `${field}.to`, at);
  }
}

function checkActor(sink: IssueSink, actor: string, field: string, line: number | undefined): void {
  const kind = actorKind(actor);
  if (kind === 'team')
    sink.warn(
      'actor-team',
      `\`${field}\` "${actor}": team:<id> is not an actor form of the spec (human:, process:, <tool>/<version>); read as non-human`,
      line,
    );
  else if (kind === 'unknown')
    sink.warn(
      'actor-form',
      `\`${field}\` "${actor}" is not an actor: use human:<id>, process:<id> or <tool>/<version>`,
      line,
    );
}

function readTags(value: unknown, sink: IssueSink, line: number | undefined): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) {
    sink.warn('field-shape', '`tags` should be a list of strings', line);
    return [];
  }
  return value.filter((t) => typeof t === 'string' || typeof t === 'number').map(String);
}

function readSources(
  value: unknown,
  sink: IssueSink,
  line: number | undefined,
  time: (value: unknown, field: string, at: number | undefined) => TimeValue | undefined,
  window: (value: unknown, field: string, at: number | undefined) => void,
): ConceptSource[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    sink.warn('field-shape', '`sources` should be a list of { resource, id?, title?, ... }', line);
    return [];
  }
  const sources: ConceptSource[] = [];
  value.forEach((entry, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      sink.warn('field-shape', `\`sources[${i}]\` should be a mapping with \`resource\``, line);
      return;
    }
    const e = entry as Record<string, unknown>;
    if (typeof e.resource !== 'string' || e.resource.trim() === '') {
      sink.warn(
        'source-resource-missing',
        `\`sources[${i}]\` has no \`resource\` (required in an entry)`,
        line,
      );
      return;
    }
    const source: ConceptSource = { resource: e.resource.trim() };
    if (typeof e.id === 'string') source.id = e.id;
    if (typeof e.title === 'string') source.title = e.title;
    if (typeof e.author === 'string') {
      source.author = e.author;
      checkActor(sink, e.author, `sources[${i}].author`, line);
    }
    if (typeof e.usage_count === 'number') source.usageCount = e.usage_count;
    const modified = time(e.last_modified, `sources[${i}].last_modified`, line);
    if (modified) source.lastModified = modified;
    if (e.usage_window !== undefined) window(e.usage_window, `sources[${i}].usage_window`, line);
    sources.push(source);
  });
  return sources;
}

/** `tables/customer-orders.md` → `customer orders`, for concepts without a `title` (§4.1 MAY). */
function titleFromPath(path: string): string {
  const base = path.split('/').pop() ?? path;
  return base.replace(/\.md$/i, '').replace(/[-_]+/g, ' ').trim() || base;
}
