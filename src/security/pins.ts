import { createTwoFilesPatch } from 'diff';
import type { PinRecord, PinRecords } from '../store/pins.js';
import { pushAll } from '../util/arrays.js';
import { canonicalJson, sha256Hex } from '../util/canonical-json.js';
import { catalogSignals, type ScannableDefinition } from './catalog.js';
import { applyJudge, type JudgeCache, judgeDigest } from './judge.js';
import {
  type CatalogSignal,
  type Finding,
  type ScanOptions,
  scanText,
  scanTool,
  type ToolScan,
} from './scan.js';

/**
 * Trust on first use. The first definition a server identity shows for a tool, its instructions or a prompt is
 * pinned by the SHA-256 of its canonical JSON; a different definition later (a rug pull, or an honest update) is
 * held back until the user reviews the diff and accepts it (`tack pins diff | accept`). A definition whose scan
 * has a high finding is held back the same way, even at first sight: nothing approved it yet.
 */
export type PinKind = 'tool' | 'instructions' | 'prompt' | 'skill' | 'resource';

/** The parts of a tool definition that reach the model or change what a call does. */
export interface PinnableTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

export interface PinnablePrompt {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  arguments?: unknown;
}

/** A resource or resource template as listed: pinned under its URI (or URI template). */
export interface PinnableResource {
  uri: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
}

/** One server as the guard sees it: what it offers right now, under its identity. */
export interface ServerDefinitions {
  server: string;
  /** mcp/definitions.ts serverIdentity: the same name pointed at another program is another identity. */
  identity: string;
  tools: readonly PinnableTool[];
  instructions?: string | undefined;
  prompts?: readonly PinnablePrompt[];
  /** Only when given: `tack read` checks the resource it reads; sessions and the gateway do not pass them. */
  resources?: readonly PinnableResource[];
}

/** A definition held back: not offered to the model until the user accepts it. */
export interface HeldDefinition {
  server: string;
  identity: string;
  kind: PinKind;
  /** The server's own name (a tool's or a prompt's); empty for instructions. */
  name: string;
  /** `changed`: differs from the pinned one; `flagged`: a high scan finding and nothing approved yet. */
  why: 'changed' | 'flagged';
  /** In words, for the model, the log and the prompt. */
  reason: string;
  findings: Finding[];
  sha256: string;
  pinnedSha256?: string;
}

export interface GuardReview {
  held: HeldDefinition[];
  /** Definitions pinned by this review (first sight, nothing alarming). */
  pinned: number;
}

/** The canonical form that is pinned: the same tool always yields the same bytes, whatever the key order. */
export function toolPinDefinition(tool: PinnableTool): Record<string, unknown> {
  return compact({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  });
}

export function resourcePinDefinition(resource: PinnableResource): Record<string, unknown> {
  return compact({
    uri: resource.uri,
    name: resource.name,
    title: resource.title,
    description: resource.description,
    mimeType: resource.mimeType,
  });
}

export function promptPinDefinition(prompt: PinnablePrompt): Record<string, unknown> {
  return compact({
    name: prompt.name,
    title: prompt.title,
    description: prompt.description,
    arguments: prompt.arguments,
  });
}

export interface DefinitionGuardOptions {
  /** Characters of one definition the scanner reads (tack.json `limits.scanBytes`; see ScanOptions.scanBytes). */
  scanBytes?: number | undefined;
  /**
   * The scan judge's cached verdicts (`scan.judge` in tack.json): a grey definition a judge already saw
   * (`tack scan --judge`) gets its verdict here too. The guard never calls a model itself: reviews are synchronous.
   */
  judge?: { model: string; cache: JudgeCache } | undefined;
}

/** Pins and held definitions over the store's `pins` table; one per host or session. */
export class DefinitionGuard {
  readonly #records: PinRecords;
  readonly #scanBytes: number | undefined;
  readonly #judge: DefinitionGuardOptions['judge'];
  /** Scans are pure functions of the text (and the catalog signals): memoized, so a rebuild does not rescan. */
  readonly #scans = new Map<string, Finding[]>();
  /** The last review of each identity, with the listing arrays it looked at. */
  readonly #last = new Map<
    string,
    {
      tools: ServerDefinitions['tools'];
      prompts: ServerDefinitions['prompts'];
      resources: ServerDefinitions['resources'];
      instructions: string | undefined;
      held: HeldDefinition[];
    }
  >();

  constructor(records: PinRecords, options: DefinitionGuardOptions = {}) {
    this.#records = records;
    this.#scanBytes = options.scanBytes;
    this.#judge = options.judge;
  }

  /** A scan's findings, with a cached judge verdict applied when the scan left the definition in doubt. */
  #judged(definition: ScannableDefinition, scan: ToolScan): Finding[] {
    if (!scan.grey || !this.#judge) return scan.findings;
    const cached = this.#judge.cache.get(this.#judge.model, judgeDigest(definition));
    if (!cached) return scan.findings;
    return applyJudge(
      scan,
      { ...cached, model: this.#judge.model, cached: true },
      {
        kind: definition.kind === 'prompt' ? 'prompt' : 'tool-description',
        server: definition.server,
        name: definition.name,
      },
    ).findings;
  }

  /**
   * Compares what a server offers with its pins: new and clean definitions are pinned, changed or flagged
   * ones are held (recorded as pending, with the reason). A definition that went back to its pinned form is
   * released again.
   */
  review(
    definitions: ServerDefinitions,
    options: ScanOptions = {},
    /** What the catalog checks found for each tool of this server, by tool name (reviewAll). */
    signals: ReadonlyMap<string, readonly CatalogSignal[]> = new Map(),
  ): GuardReview {
    // Bounded per definition (scan.ts), so a hostile server's listing costs its size, not its size squared.
    const scan: ScanOptions =
      this.#scanBytes === undefined ? options : { scanBytes: this.#scanBytes, ...options };
    // The host rebuilds its catalog on every status change, with the same listing arrays for the servers that
    // did not change: those need no second look.
    const last = this.#last.get(definitions.identity);
    if (
      last &&
      last.tools === definitions.tools &&
      last.prompts === definitions.prompts &&
      last.resources === definitions.resources &&
      last.instructions === definitions.instructions
    )
      return { held: last.held, pinned: 0 };
    const held: HeldDefinition[] = [];
    let pinned = 0;
    // One query per server, not one per definition.
    const records = new Map(this.#records.list(definitions.identity).map((r) => [`${r.kind}\0${r.name}`, r]));
    const check = (
      kind: PinKind,
      name: string,
      definition: unknown,
      findings: () => Finding[],
      memoKey = '',
    ) => {
      const text = kind === 'instructions' ? String(definition) : canonicalJson(definition);
      const digest = sha256Hex(text);
      const record = records.get(`${kind}\0${name}`);
      if (record && record.sha256 === digest) {
        if (record.pending) this.#records.approve(definitions.identity, kind, name, digest, text);
        return;
      }
      const found = this.#memo(`${digest}${memoKey}`, findings);
      const high = found.filter((f) => f.severity === 'high');
      if (!record?.sha256 && high.length === 0) {
        // First sight (or the first clean version of something never approved): trust on first use.
        this.#records.approve(definitions.identity, kind, name, digest, text);
        pinned++;
        return;
      }
      const why = record?.sha256 ? 'changed' : 'flagged';
      const subject =
        kind === 'instructions' ? `the instructions of ${definitions.server}` : `${kind} ${name}`;
      const reason =
        why === 'changed'
          ? `${subject} changed since it was approved (sha256 ${record!.sha256.slice(0, 12)} -> ${digest.slice(0, 12)})${high.length ? `; the new text has ${describe(high)}` : ''}`
          : `${subject} has ${describe(high)}`;
      this.#records.hold(definitions.identity, kind, name, digest, text, reason);
      held.push({
        server: definitions.server,
        identity: definitions.identity,
        kind,
        name,
        why,
        reason,
        findings: found,
        sha256: digest,
        ...(record?.sha256 ? { pinnedSha256: record.sha256 } : {}),
      });
    };

    for (const tool of definitions.tools) {
      const definition = toolPinDefinition(tool);
      const catalog = signals.get(tool.name) ?? [];
      const scannable: ScannableDefinition = {
        server: definitions.server,
        name: tool.name,
        ...(tool.title ? { title: tool.title } : {}),
        ...(tool.description ? { description: tool.description } : {}),
        inputSchema: tool.inputSchema,
        ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
        ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
      };
      check(
        'tool',
        tool.name,
        definition,
        () => this.#judged(scannable, scanTool(scannable, { ...scan, catalogSignals: catalog })),
        catalog.length ? `\0${catalog.map((s) => `${s.code} ${s.message}`).join('\0')}` : '',
      );
    }
    if (definitions.instructions)
      check('instructions', '', definitions.instructions, () =>
        scanText(definitions.instructions ?? '', { kind: 'instructions', server: definitions.server }, scan),
      );
    // Prompts and resources are weighed like tools: a prompt's arguments are read as parameters.
    for (const prompt of definitions.prompts ?? []) {
      const definition = promptPinDefinition(prompt);
      const scannable: ScannableDefinition = {
        kind: 'prompt',
        server: definitions.server,
        name: prompt.name,
        ...(prompt.title ? { title: prompt.title } : {}),
        ...(prompt.description ? { description: prompt.description } : {}),
        ...(prompt.arguments !== undefined ? { arguments: prompt.arguments } : {}),
      };
      check('prompt', prompt.name, definition, () => this.#judged(scannable, scanTool(scannable, scan)));
    }
    for (const resource of definitions.resources ?? []) {
      check(
        'resource',
        resource.uri,
        resourcePinDefinition(resource),
        () =>
          scanTool(
            {
              server: definitions.server,
              name: resource.name,
              ...(resource.title ? { title: resource.title } : {}),
              ...(resource.description ? { description: resource.description } : {}),
            },
            scan,
          ).findings,
      );
    }
    this.#last.set(definitions.identity, {
      tools: definitions.tools,
      prompts: definitions.prompts,
      resources: definitions.resources,
      instructions: definitions.instructions,
      held,
    });
    return { held, pinned };
  }

  /**
   * Reviews every server of a catalog at once; another server's tool names count as shadowing signs in the scan,
   * a sibling's do not (scanTool is given `server__tool` names).
   */
  reviewAll(servers: readonly ServerDefinitions[]): GuardReview {
    const knownTools = servers.flatMap((s) => s.tools.map((t) => `${s.server}__${t.name}`));
    const knownServers = servers.map((s) => s.server);
    // The catalog checks (overlap, competing claims) over every server's tools, handed to each server's review.
    const all = servers.flatMap((s) =>
      s.tools.map((t) => ({ server: s.server, name: t.name, description: t.description ?? '' })),
    );
    const found = catalogSignals(all);
    const signals = new Map<string, Map<string, CatalogSignal[]>>();
    all.forEach((t, i) => {
      const list = found.get(i);
      if (!list) return;
      const byTool = signals.get(t.server) ?? new Map<string, CatalogSignal[]>();
      byTool.set(t.name, list);
      signals.set(t.server, byTool);
    });
    const held: HeldDefinition[] = [];
    let pinned = 0;
    this.#records.transaction(() => {
      for (const server of servers) {
        const review = this.review(server, { knownTools, knownServers }, signals.get(server.server));
        pushAll(held, review.held);
        pinned += review.pinned;
      }
    });
    return { held, pinned };
  }

  /**
   * A skill's SKILL.md. Pinned at first sight without a scan verdict (a skill is instructions to the model by
   * design, so directive phrasing is its job, not a sign); a changed file is held like a changed tool, except
   * with `own` (the user's own skills folder), where the user is the author: re-pinned, and reported.
   */
  reviewSkills(
    skills: ReadonlyArray<{ identity: string; name: string; text: string; own: boolean }>,
  ): Array<HeldDefinition | 'repinned' | undefined> {
    // One transaction for a library's worth of first pins, as for a catalog.
    return this.#records.transaction(() => skills.map((skill) => this.#reviewSkill(skill)));
  }

  #reviewSkill(skill: {
    identity: string;
    name: string;
    text: string;
    own: boolean;
  }): HeldDefinition | 'repinned' | undefined {
    const digest = sha256Hex(skill.text);
    const record = this.#records.get(skill.identity, 'skill', skill.name);
    if (record && record.sha256 === digest) {
      if (record.pending) this.#records.approve(skill.identity, 'skill', skill.name, digest, skill.text);
      return undefined;
    }
    if (!record?.sha256 || skill.own) {
      this.#records.approve(skill.identity, 'skill', skill.name, digest, skill.text);
      return record?.sha256 ? 'repinned' : undefined;
    }
    const reason = `skill ${skill.name} changed since it was approved (sha256 ${record.sha256.slice(0, 12)} -> ${digest.slice(0, 12)})`;
    this.#records.hold(skill.identity, 'skill', skill.name, digest, skill.text, reason);
    return {
      server: 'skill',
      identity: skill.identity,
      kind: 'skill',
      name: skill.name,
      why: 'changed',
      reason,
      findings: [],
      sha256: digest,
      pinnedSha256: record.sha256,
    };
  }

  /**
   * Whether any of `held` was accepted (or forgotten) since, in this process or another (`tack pins accept` while
   * a session or `tack serve` runs). Forgets the last review of those servers, so the next review sees it.
   */
  released(held: readonly HeldDefinition[]): boolean {
    let any = false;
    for (const h of held) {
      const record = this.#records.get(h.identity, h.kind, h.name);
      if (record?.pending?.sha256 === h.sha256) continue;
      this.#last.delete(h.identity);
      any = true;
    }
    return any;
  }

  /** Accepts one held definition: it becomes the pin. */
  accept(held: Pick<HeldDefinition, 'identity' | 'kind' | 'name' | 'sha256'>): void {
    acceptPins(this.#records, held.identity, held.kind, held.name, held.sha256);
    this.#last.delete(held.identity);
  }

  /** The diff of a held definition against its pin (see pinDiff). */
  diff(held: Pick<HeldDefinition, 'identity' | 'kind' | 'name'>): string {
    const record = this.#records.get(held.identity, held.kind, held.name);
    return record ? pinDiff(record) : '';
  }

  #memo(digest: string, scan: () => Finding[]): Finding[] {
    let found = this.#scans.get(digest);
    if (!found) {
      found = scan();
      this.#scans.set(digest, found);
    }
    return found;
  }
}

/**
 * Accepts what is pending (for an identity, optionally one kind and name); returns what was accepted. With
 * `sha256` (a prefix), only a pending version with that digest: the one the user reviewed, not one another tack
 * process recorded since.
 */
export function acceptPins(
  records: PinRecords,
  identity: string,
  kind?: string,
  name?: string,
  sha256?: string,
): PinRecord[] {
  const pending = records
    .list(identity)
    .filter(
      (r) =>
        r.pending &&
        (kind === undefined || r.kind === kind) &&
        (name === undefined || r.name === name) &&
        (sha256 === undefined || r.pending.sha256.startsWith(sha256)),
    );
  for (const record of pending)
    records.approve(identity, record.kind, record.name, record.pending!.sha256, record.pending!.definition);
  return pending;
}

/** A unified diff of the approved definition and the one waiting, pretty-printed so a changed line stands out. */
export function pinDiff(record: PinRecord): string {
  const label = `${record.kind} ${record.name || '(instructions)'}`;
  const pretty = (text: string) => {
    if (!text) return '';
    if (record.kind === 'instructions' || record.kind === 'skill') return `${text}\n`;
    try {
      return `${JSON.stringify(JSON.parse(text), null, 2)}\n`;
    } catch {
      return `${text}\n`;
    }
  };
  return createTwoFilesPatch(
    `pinned ${label}`,
    `now ${label}`,
    pretty(record.definition),
    pretty(record.pending?.definition ?? record.definition),
    record.sha256 ? `sha256 ${record.sha256.slice(0, 12)}` : 'never approved',
    record.pending ? `sha256 ${record.pending.sha256.slice(0, 12)}` : '',
  );
}

function describe(findings: readonly Finding[]): string {
  const codes = [...new Set(findings.map((f) => f.code))];
  return `high scan findings (${codes.join(', ')})`;
}

function compact(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

/**
 * The findings of a pinned (or pending) definition as its canonical text holds it, scanned as the guard scanned it
 * (without the catalog checks, which depend on the servers beside it): for `tack pins diff` to explain a hold.
 */
export function scanPinnedText(
  kind: string,
  server: string,
  text: string,
  options: ScanOptions = {},
): Finding[] {
  if (!text) return [];
  if (kind === 'instructions') return scanText(text, { kind: 'instructions', server }, options);
  if (kind === 'skill') return [];
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return [];
  }
  const str = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const name = str(parsed.name) ?? '';
  const title = str(parsed.title);
  const description = str(parsed.description);
  return scanTool(
    {
      server,
      name,
      ...(title ? { title } : {}),
      ...(description ? { description } : {}),
      ...(kind === 'tool'
        ? {
            inputSchema: parsed.inputSchema,
            ...(parsed.outputSchema !== undefined ? { outputSchema: parsed.outputSchema } : {}),
            ...(parsed.annotations !== undefined ? { annotations: parsed.annotations } : {}),
          }
        : {}),
      ...(kind === 'prompt' && parsed.arguments !== undefined ? { arguments: parsed.arguments } : {}),
    },
    options,
  ).findings;
}

/**
 * The guard's options from a configuration (its `limits.scanBytes` and `scan.judge.model`) and the store whose
 * cached judge verdicts it uses. Structural, so the security layer needs no configuration types.
 */
export function guardOptions(
  config:
    | { limits?: { scanBytes?: number | undefined }; scan?: { judge?: { model: string } | undefined } }
    | undefined,
  store: { scanJudgements: JudgeCache } | undefined,
): DefinitionGuardOptions {
  const model = config?.scan?.judge?.model;
  return {
    scanBytes: config?.limits?.scanBytes,
    ...(model && store ? { judge: { model, cache: store.scanJudgements } } : {}),
  };
}
