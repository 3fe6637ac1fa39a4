import { createTwoFilesPatch } from 'diff';
import type { PinRecord, PinRecords, PinWrite } from '../store/pins.js';
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
/**
 * `resource-template` apart from `resource`: one URI listed as both is two definitions, pinned apart. `package`:
 * what a package runner (`npx -y pkg`) ran for a server, its version and integrity.
 */
export type PinKind =
  | 'tool'
  | 'instructions'
  | 'prompt'
  | 'skill'
  | 'resource'
  | 'resource-template'
  | 'package';

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
  /** Listed as a resource template (its `uri` is the URI template). */
  template?: boolean | undefined;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
}

/**
 * What a package runner ran for a server (mcp/package-resolve.ts ResolvedPackage, structurally): pinned when a
 * version was seen, so that the next release behind `npx -y pkg` is held like a changed definition.
 */
export interface PinnablePackage {
  runner: string;
  package: string;
  requested: string;
  version?: string | undefined;
  resolved?: string | undefined;
  integrity?: string | undefined;
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
  /** What its package runner ran at the last start; a different version or integrity holds every tool. */
  package?: PinnablePackage | undefined;
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
  /**
   * Held because another definition of its server is: a tool or prompt of a server whose package changed is held
   * with the package, and released or accepted with it (`kind` and `name` of that one).
   */
  via?: { kind: PinKind; name: string };
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
   * (`tack scan --judge`) gets its verdict here too. The guard never calls a model itself: it reads the cache only.
   */
  judge?: { model: string; cache: JudgeCache } | undefined;
  /** The project root the definitions are seen in, noted with their identities (`tack pins list` filters by it). */
  project?: string | undefined;
}

/** Pins and held definitions over the store's `pins` table; one per host or session. */
export class DefinitionGuard {
  readonly #records: PinRecords;
  readonly #scanBytes: number | undefined;
  readonly #judge: DefinitionGuardOptions['judge'];
  readonly #project: string | undefined;
  /** Identities already noted as seen in the project, so a rebuilt catalog writes nothing again. */
  readonly #noted = new Set<string>();
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
      package: PinnablePackage | undefined;
      held: HeldDefinition[];
    }
  >();

  constructor(records: PinRecords, options: DefinitionGuardOptions = {}) {
    this.#records = records;
    this.#scanBytes = options.scanBytes;
    this.#judge = options.judge;
    this.#project = options.project;
  }

  /** Notes the identities this guard had not noted yet as seen in its project. */
  async #note(identities: readonly string[]): Promise<void> {
    if (this.#project === undefined) return;
    const fresh = [...new Set(identities)].filter((identity) => !this.#noted.has(identity));
    if (fresh.length === 0) return;
    await this.#records.noteProject(this.#project, fresh);
    for (const identity of fresh) this.#noted.add(identity);
  }

  /** A scan's findings, with a cached judge verdict applied when the scan left the definition in doubt. */
  async #judged(definition: ScannableDefinition, scan: ToolScan): Promise<Finding[]> {
    if (!scan.grey || !this.#judge) return scan.findings;
    const cached = await this.#judge.cache.get(this.#judge.model, judgeDigest(definition));
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
  async review(definitions: ServerDefinitions, options: ScanOptions = {}): Promise<GuardReview> {
    return this.reviewAll([definitions], options);
  }

  /**
   * Reviews every server of a catalog at once; another server's tool names count as shadowing signs in the scan,
   * a sibling's do not (scanTool is given `server__tool` names), and the catalog checks (overlap, competing
   * claims) run over every server's tools. One read per server, one write for them all.
   */
  async reviewAll(servers: readonly ServerDefinitions[], options?: ScanOptions): Promise<GuardReview> {
    const scan: ScanOptions = {
      ...(options ?? {
        knownTools: servers.flatMap((s) => s.tools.map((t) => `${s.server}__${t.name}`)),
        knownServers: servers.map((s) => s.server),
      }),
    };
    // Bounded per definition (scan.ts), so a hostile server's listing costs its size, not its size squared.
    if (this.#scanBytes !== undefined) scan.scanBytes ??= this.#scanBytes;
    // The catalog checks over every server's tools, handed to each server's checks (a catalog review only).
    const signals = new Map<string, Map<string, CatalogSignal[]>>();
    if (!options) {
      const all = servers.flatMap((s) =>
        s.tools.map((t) => ({ server: s.server, name: t.name, description: t.description ?? '' })),
      );
      const found = catalogSignals(all);
      all.forEach((t, i) => {
        const list = found.get(i);
        if (!list) return;
        const byTool = signals.get(t.server) ?? new Map<string, CatalogSignal[]>();
        byTool.set(t.name, list);
        signals.set(t.server, byTool);
      });
    }
    const held: HeldDefinition[] = [];
    let pinned = 0;
    const plans: Array<{ definitions: ServerDefinitions; checks: Check[] }> = [];
    for (const definitions of servers) {
      // The host rebuilds its catalog on every status change, with the same listing arrays for the servers that
      // did not change: those need no second look.
      const last = this.#last.get(definitions.identity);
      if (
        last &&
        last.tools === definitions.tools &&
        last.prompts === definitions.prompts &&
        last.resources === definitions.resources &&
        last.instructions === definitions.instructions &&
        last.package === definitions.package
      ) {
        pushAll(held, last.held);
        continue;
      }
      plans.push({
        definitions,
        checks: this.#checks(definitions, scan, signals.get(definitions.server) ?? new Map()),
      });
    }
    if (plans.length === 0) return { held, pinned };
    await this.#note(plans.map(({ definitions }) => definitions.identity));
    // One query per server, not one per definition.
    const records = await Promise.all(
      plans.map(({ definitions }) => this.#records.list(definitions.identity)),
    );
    const writes: PinWrite[] = [];
    const decided: Array<{ plan: number; check: Check; decision: Decision; write: number }> = [];
    for (const [p, plan] of plans.entries()) {
      const byKey = new Map(records[p]!.map((r) => [`${r.kind}\0${r.name}`, r]));
      for (const check of plan.checks) {
        const decision = await decide(plan.definitions, check, byKey.get(`${check.kind}\0${check.name}`));
        decided.push({
          plan: p,
          check,
          decision,
          write: decision.write ? writes.push(decision.write) - 1 : -1,
        });
      }
    }
    const standing = await this.#records.write(writes);
    // A `first` write another process beat: what it pinned stands, and this version is judged against it.
    const retry: PinWrite[] = [];
    for (const entry of decided) {
      const other = standing.get(entry.write);
      if (!other) continue;
      entry.decision = await decide(plans[entry.plan]!.definitions, entry.check, other);
      if (entry.decision.write) retry.push(entry.decision.write);
    }
    if (retry.length > 0) await this.#records.write(retry);
    const heldBy = plans.map((): HeldDefinition[] => []);
    for (const { plan, decision } of decided) {
      if (decision.pinned) pinned++;
      if (decision.held) heldBy[plan]!.push(decision.held);
    }
    plans.forEach(({ definitions }, p) => {
      pushAll(heldBy[p]!, heldWithPackage(definitions, heldBy[p]!));
      pushAll(held, heldBy[p]!);
      this.#last.set(definitions.identity, {
        tools: definitions.tools,
        prompts: definitions.prompts,
        resources: definitions.resources,
        instructions: definitions.instructions,
        package: definitions.package,
        held: heldBy[p]!,
      });
    });
    return { held, pinned };
  }

  /** What to check of one server: each definition in its pinned form, with its scan run only when needed. */
  #checks(
    definitions: ServerDefinitions,
    scan: ScanOptions,
    /** What the catalog checks found for each tool of this server, by tool name. */
    signals: ReadonlyMap<string, readonly CatalogSignal[]>,
  ): Check[] {
    const checks: Check[] = [];
    const add = (
      kind: PinKind,
      name: string,
      definition: unknown,
      findings: () => Finding[] | Promise<Finding[]>,
      memoKey = '',
    ) => {
      const text = kind === 'instructions' ? String(definition) : canonicalJson(definition);
      const digest = sha256Hex(text);
      checks.push({ kind, name, text, digest, findings: () => this.#memo(`${digest}${memoKey}`, findings) });
    };
    for (const tool of definitions.tools) {
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
      add(
        'tool',
        tool.name,
        toolPinDefinition(tool),
        () => this.#judged(scannable, scanTool(scannable, { ...scan, catalogSignals: catalog })),
        catalog.length ? `\0${catalog.map((s) => `${s.code} ${s.message}`).join('\0')}` : '',
      );
    }
    if (definitions.instructions)
      add('instructions', '', definitions.instructions, () =>
        scanText(definitions.instructions ?? '', { kind: 'instructions', server: definitions.server }, scan),
      );
    // Prompts and resources are weighed like tools: a prompt's arguments are read as parameters.
    for (const prompt of definitions.prompts ?? []) {
      const scannable: ScannableDefinition = {
        kind: 'prompt',
        server: definitions.server,
        name: prompt.name,
        ...(prompt.title ? { title: prompt.title } : {}),
        ...(prompt.description ? { description: prompt.description } : {}),
        ...(prompt.arguments !== undefined ? { arguments: prompt.arguments } : {}),
      };
      add('prompt', prompt.name, promptPinDefinition(prompt), () =>
        this.#judged(scannable, scanTool(scannable, scan)),
      );
    }
    const pkg = definitions.package;
    // An npx server whose version cannot be read (its install record gone or not a file) is pinned as unknown:
    // after a pin with a version, that is a change, held like one, not a server without a package.
    if (pkg && (pkg.version || pkg.runner === 'npx')) {
      const text = canonicalJson(packagePinDefinition(pkg));
      // With an integrity, the bytes are named: the same tarball from another registry URL is the same code.
      const digest = sha256Hex(
        pkg.integrity ? canonicalJson(packagePinDefinition({ ...pkg, resolved: undefined })) : text,
      );
      checks.push({ kind: 'package', name: pkg.package, text, digest, findings: async () => [] });
    }
    for (const resource of definitions.resources ?? []) {
      add(
        resource.template ? 'resource-template' : 'resource',
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
    return checks;
  }

  /**
   * A skill's SKILL.md. Pinned at first sight without a scan verdict (a skill is instructions to the model by
   * design, so directive phrasing is its job, not a sign); a changed file is held like a changed tool, except
   * with `own` (the user's own skills folder), where the user is the author: re-pinned, and reported.
   */
  async reviewSkills(
    skills: ReadonlyArray<{ identity: string; name: string; text: string; own: boolean }>,
  ): Promise<Array<HeldDefinition | 'repinned' | undefined>> {
    const records = await Promise.all(skills.map((s) => this.#records.get(s.identity, 'skill', s.name)));
    const writes: PinWrite[] = [];
    const out = skills.map((skill, i) => {
      const digest = sha256Hex(skill.text);
      const record = records[i];
      const key = { identity: skill.identity, kind: 'skill', name: skill.name };
      if (record && record.sha256 === digest) {
        if (record.pending) writes.push({ ...key, op: 'approve', sha256: digest, definition: skill.text });
        return undefined;
      }
      if (!record?.sha256 || skill.own) {
        writes.push({ ...key, op: 'approve', sha256: digest, definition: skill.text });
        return record?.sha256 ? ('repinned' as const) : undefined;
      }
      const reason = `skill ${skill.name} changed since it was approved (sha256 ${record.sha256.slice(0, 12)} -> ${digest.slice(0, 12)})`;
      writes.push({ ...key, op: 'hold', sha256: digest, definition: skill.text, reason });
      return {
        server: 'skill',
        identity: skill.identity,
        kind: 'skill' as const,
        name: skill.name,
        why: 'changed' as const,
        reason,
        findings: [],
        sha256: digest,
        pinnedSha256: record.sha256,
      };
    });
    // One transaction for a library's worth of first pins, as for a catalog.
    await this.#records.write(writes);
    await this.#note(skills.map((s) => s.identity));
    return out;
  }

  /**
   * Whether any of `held` was accepted (or forgotten) since, in this process or another (`tack pins accept` while
   * a session or `tack serve` runs, or another instance sharing the store). Forgets the last review of those
   * servers, so the next review sees it. One read per server identity.
   */
  async released(held: readonly HeldDefinition[]): Promise<boolean> {
    const identities = [...new Set(held.map((h) => h.identity))];
    const lists = await Promise.all(identities.map((identity) => this.#records.list(identity)));
    const pending = new Map<string, string | undefined>();
    for (const list of lists)
      for (const r of list) pending.set(`${r.identity}\0${r.kind}\0${r.name}`, r.pending?.sha256);
    let any = false;
    for (const h of held) {
      const { kind, name } = h.via ?? h;
      if (pending.get(`${h.identity}\0${kind}\0${name}`) === h.sha256) continue;
      this.#last.delete(h.identity);
      any = true;
    }
    return any;
  }

  /** Accepts one held definition: it becomes the pin. */
  async accept(held: Pick<HeldDefinition, 'identity' | 'kind' | 'name' | 'sha256' | 'via'>): Promise<void> {
    const { kind, name } = held.via ?? held;
    await acceptPins(this.#records, held.identity, kind, name, held.sha256);
    this.#last.delete(held.identity);
  }

  /** The diff of a held definition against its pin (see pinDiff). */
  async diff(held: Pick<HeldDefinition, 'identity' | 'kind' | 'name' | 'via'>): Promise<string> {
    const { kind, name } = held.via ?? held;
    const record = await this.#records.get(held.identity, kind, name);
    return record ? pinDiff(record) : '';
  }

  async #memo(key: string, scan: () => Finding[] | Promise<Finding[]>): Promise<Finding[]> {
    let found = this.#scans.get(key);
    if (!found) {
      found = await scan();
      this.#scans.set(key, found);
    }
    return found;
  }
}

/**
 * Accepts what is pending (for an identity, optionally one kind and name); returns what was accepted. With
 * `sha256` (a prefix), only a pending version with that digest: the one the user reviewed, not one another tack
 * process recorded since.
 */
export async function acceptPins(
  records: PinRecords,
  identity: string,
  kind?: string,
  name?: string,
  sha256?: string,
): Promise<PinRecord[]> {
  const pending = (await records.list(identity)).filter(
    (r) =>
      r.pending &&
      (kind === undefined || r.kind === kind) &&
      (name === undefined || r.name === name) &&
      (sha256 === undefined || r.pending.sha256.startsWith(sha256)),
  );
  await records.write(
    pending.map((record) => ({
      op: 'approve',
      identity,
      kind: record.kind,
      name: record.name,
      sha256: record.pending!.sha256,
      definition: record.pending!.definition,
    })),
  );
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

/** One definition as the guard checks it: its pinned text, digest and (lazy, memoized) scan. */
interface Check {
  kind: PinKind;
  name: string;
  text: string;
  digest: string;
  findings: () => Promise<Finding[]>;
}

interface Decision {
  write?: PinWrite;
  pinned?: boolean;
  held?: HeldDefinition;
}

/** What to do with one definition given its record: nothing, pin it, release it, or hold it. */
async function decide(
  definitions: ServerDefinitions,
  check: Check,
  record: PinRecord | undefined,
): Promise<Decision> {
  const { kind, name, text, digest } = check;
  const key = { identity: definitions.identity, kind, name };
  if (record && record.sha256 === digest)
    return record.pending ? { write: { ...key, op: 'approve', sha256: digest, definition: text } } : {};
  const found = await check.findings();
  const high = found.filter((f) => f.severity === 'high');
  if (!record?.sha256 && high.length === 0)
    // First sight (or the first clean version of something never approved): trust on first use.
    return { write: { ...key, op: 'first', sha256: digest, definition: text }, pinned: true };
  const why = record?.sha256 ? 'changed' : 'flagged';
  const subject =
    kind === 'instructions'
      ? `the instructions of ${definitions.server}`
      : `${kind === 'resource-template' ? 'resource template' : kind} ${name}`;
  const change =
    kind === 'package' && record
      ? packageChange(record.definition, text)
      : `sha256 ${record?.sha256.slice(0, 12)} -> ${digest.slice(0, 12)}`;
  const reason =
    why === 'changed'
      ? `${subject} changed since it was approved (${change})${high.length ? `; the new text has ${describe(high)}` : ''}`
      : `${subject} has ${describe(high)}`;
  return {
    write: { ...key, op: 'hold', sha256: digest, definition: text, reason },
    held: {
      server: definitions.server,
      identity: definitions.identity,
      kind,
      name,
      why,
      reason,
      findings: found,
      sha256: digest,
      ...(record?.sha256 ? { pinnedSha256: record.sha256 } : {}),
    },
  };
}

/** The canonical form of a package that is pinned: runner, name, version, where it came from and its integrity. */
export function packagePinDefinition(pkg: PinnablePackage): Record<string, unknown> {
  return compact({
    runner: pkg.runner,
    package: pkg.package,
    version: pkg.version,
    integrity: pkg.integrity,
    resolved: pkg.resolved,
  });
}

/** `1.0.0 -> 1.0.1`, or the integrities when one version was published twice (another registry's tarball). */
function packageChange(before: string, after: string): string {
  const field = (text: string, key: string) => {
    try {
      const value = (JSON.parse(text) as Record<string, unknown>)[key];
      return typeof value === 'string' ? value : '?';
    } catch {
      return '?';
    }
  };
  const [from, to] = [field(before, 'version'), field(after, 'version')];
  if (from !== to) return `${from} -> ${to}`;
  return `${from}, integrity ${field(before, 'integrity').slice(0, 19)} -> ${field(after, 'integrity').slice(0, 19)}`;
}

/**
 * The tools and prompts of a server whose package is held, held with it: the definitions may read the same, the
 * code behind them is not the code the user approved. Those held on their own stay as they are.
 */
function heldWithPackage(definitions: ServerDefinitions, held: readonly HeldDefinition[]): HeldDefinition[] {
  const pkg = held.find((h) => h.kind === 'package');
  if (!pkg) return [];
  const own = new Set(held.map((h) => `${h.kind}\0${h.name}`));
  const items: Array<{ kind: PinKind; name: string }> = [
    ...definitions.tools.map((t) => ({ kind: 'tool' as const, name: t.name })),
    ...(definitions.prompts ?? []).map((p) => ({ kind: 'prompt' as const, name: p.name })),
  ];
  return items
    .filter((item) => !own.has(`${item.kind}\0${item.name}`))
    .map((item) => ({
      server: pkg.server,
      identity: pkg.identity,
      kind: item.kind,
      name: item.name,
      why: 'changed' as const,
      reason: pkg.reason,
      findings: [],
      sha256: pkg.sha256,
      ...(pkg.pinnedSha256 ? { pinnedSha256: pkg.pinnedSha256 } : {}),
      via: { kind: 'package' as const, name: pkg.name },
    }));
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
  if (kind === 'skill' || kind === 'package') return [];
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
    | {
        limits?: { scanBytes?: number | undefined };
        scan?: { judge?: { model: string } | undefined };
        projectRoot?: string | undefined;
      }
    | undefined,
  store: { scanJudgements: JudgeCache } | undefined,
): DefinitionGuardOptions {
  const model = config?.scan?.judge?.model;
  return {
    scanBytes: config?.limits?.scanBytes,
    project: config?.projectRoot,
    ...(model && store ? { judge: { model, cache: store.scanJudgements } } : {}),
  };
}
