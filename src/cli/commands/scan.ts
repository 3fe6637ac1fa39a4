import { judgeCall } from '../../agent/scan-judge.js';
import { projectSkillsTrusted } from '../../config/apply-trust.js';
import type { TackConfig } from '../../config/load.js';
import { TackError } from '../../errors.js';
import type { McpHost } from '../../mcp/host.js';
import { packageRunnerSpec } from '../../mcp/package-runner.js';
import { type EnvSource, stdioEnvironment } from '../../mcp/transport.js';
import {
  type DefinitionKind,
  type DefinitionReport,
  type ScannableDefinition,
  scanCatalog,
} from '../../security/catalog.js';
import { loadDefinitionsFile } from '../../security/definitions-file.js';
import { applyJudge, type JudgeVerdict, judgeGrey } from '../../security/judge.js';
import { unpinnedPackageFinding } from '../../security/package-pins.js';
import { type Finding, scanText, type ToolScan, verdictOf } from '../../security/scan.js';
import { SCAN_MODEL } from '../../security/scan-model.js';
import { SKILL_SCAN_MODEL, type SkillFinding, type SkillScan } from '../../security/scan-skill.js';
import { discoverSkills } from '../../skills/discover.js';
import { scanSkill } from '../../skills/scan.js';
import { openStore } from '../../store/open.js';
import type { TackStore } from '../../store/store.js';
import { pushAll } from '../../util/arrays.js';
import { describeFinding } from '../findings.js';
import { type Part, print, printJson, style, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig, withHost } from '../with-host.js';

export interface ScanOptions extends GlobalOptions {
  /** Scan exported definitions offline (a definitions file) instead of the configured servers. */
  tools?: string;
  /** Send the definitions the score leaves in doubt to `scan.judge.model`. */
  judge?: boolean;
}

interface Report {
  server: string;
  name: string;
  kind: DefinitionKind | 'instructions' | 'package';
  verdict: ToolScan['verdict'];
  /** The model's score and what added to it (absent for server instructions, scanned by the cue rules only). */
  score?: number;
  contributions?: ToolScan['contributions'];
  findings: Finding[];
  /** The LLM judge's verdict, when it judged this definition. */
  judge?: { verdict: string; reason: string; model: string; cached: boolean };
}

/** What one stdio server's process receives of the environment: names only, never values. */
interface ServerEnvironment {
  server: string;
  enabled: boolean;
  variables: Array<{ name: string; source: EnvSource }>;
}

/** `--json`: one report per definition, the thresholds they were judged by, and each stdio server's environment. */
interface ScanJson {
  tools: Report[];
  model: { fittedOn: string; thresholds: typeof SCAN_MODEL.thresholds };
  environments: ServerEnvironment[];
  /** The project's and the user's skills (not with --tools), with the skill model's thresholds. */
  skills: SkillReport[];
  skillModel: { thresholds: typeof SKILL_SCAN_MODEL.thresholds };
}

/** One skill's scan (docs/security.md, Skills): every finding with its file and line. */
interface SkillReport {
  name: string;
  dir: string;
  verdict: SkillScan['verdict'];
  score: number;
  files: string[];
  findings: SkillFinding[];
}

/**
 * `tack scan [--tools FILE] [--judge] [--json]`: the poisoning scan (docs/security.md) on every definition, one
 * verdict each, every finding with where it is, the words that raised it and why it matters; without --tools, on
 * the configured servers' tools, prompts, resources and instructions, followed by the names of the environment
 * variables each stdio server receives and where each comes from. Exit 1 when any definition would be held.
 */
export async function scanCommand(options: ScanOptions): Promise<number> {
  const { reports, environments } = options.tools ? await scanFile(options) : await scanServers(options);
  const skills = options.tools ? [] : await scanSkills(options);
  if (options.json)
    printJson({
      tools: reports,
      model: { fittedOn: SCAN_MODEL.fittedOn, thresholds: SCAN_MODEL.thresholds },
      environments,
      skills,
      skillModel: { thresholds: SKILL_SCAN_MODEL.thresholds },
    } satisfies ScanJson);
  else {
    for (const r of reports.filter((x) => x.verdict !== 'clean')) print(...describeReport(r));
    for (const r of skills.filter((x) => x.verdict !== 'clean')) print(...describeSkillReport(r));
    if (environments.length > 0) print(describeEnvironments(environments));
    const count = (v: ToolScan['verdict']) => reports.filter((r) => r.verdict === v).length;
    print(
      `${reports.length} scanned: ${count('block')} block, ${count('warn')} warn, ${count('clean')} clean`,
    );
    if (skills.length > 0) {
      const skillCount = (v: SkillScan['verdict']) => skills.filter((r) => r.verdict === v).length;
      print(
        `${skills.length} skill(s) scanned: ${skillCount('block')} block, ${skillCount('warn')} warn, ${skillCount('clean')} clean`,
      );
    }
  }
  return reports.some((r) => r.verdict === 'block') || skills.some((r) => r.verdict === 'block') ? 1 : 0;
}

/** The skills tack would offer (project skills only when the project is trusted), each scanned. */
async function scanSkills(options: ScanOptions): Promise<SkillReport[]> {
  const config = await loadCliConfig(options);
  const discovery = await discoverSkills({
    trustProject: projectSkillsTrusted(config),
    configFolders: config.skillFolders,
  });
  const reports: SkillReport[] = [];
  for (const found of discovery.skills) {
    const scan = await scanSkill(found.source, { scanBytes: config.limits.scanBytes });
    reports.push({
      name: found.source.name ?? found.source.dir,
      dir: found.source.dir,
      verdict: scan.verdict,
      score: scan.score,
      files: scan.files,
      findings: scan.findings,
    });
  }
  return reports;
}

/** A skill's report as `tack scan` prints it: the verdict, then each finding that is not low, at its file and line. */
function describeSkillReport(r: SkillReport): Part[] {
  const { warn: warnAt, block } = SKILL_SCAN_MODEL.thresholds;
  const verdict = r.verdict.toUpperCase();
  const lines = [` skill ${r.name} (score ${r.score}; warn at ${warnAt}, block at ${block})`];
  for (const f of r.findings.filter((x) => x.severity !== 'low'))
    lines.push(
      `  ${f.severity} ${f.code} (${f.file}:${f.line}): ${f.message}`,
      `    "${f.match.replace(/\s+/g, ' ').slice(0, 160)}"`,
    );
  return [r.verdict === 'block' ? style.red(verdict) : style.yellow(verdict), lines.join('\n')];
}

/** One report as `tack scan` prints it: the verdict (in colour) and score, then each finding that is not low. */
export function describeReport(r: Report): Part[] {
  const { warn: warnAt, block } = SCAN_MODEL.thresholds;
  const weighed = (r.contributions ?? [])
    .slice(0, 6)
    .map((c) => `${c.feature} +${c.weight.toFixed(1)}`)
    .join(', ');
  const score =
    r.score === undefined
      ? ''
      : ` (score ${r.score.toFixed(2)}; warn at ${warnAt}, block at ${block}${weighed ? `: ${weighed}` : ''})`;
  const kind = r.kind === 'tool' ? '' : ` [${r.kind}]`;
  const verdict = r.verdict.toUpperCase();
  const lines = [` ${r.server}/${r.name}${kind}${score}`];
  for (const f of r.findings.filter((x) => x.severity !== 'low')) pushAll(lines, describeFinding(f, '  '));
  return [
    r.verdict === 'block' ? style.red(verdict) : r.verdict === 'warn' ? style.yellow(verdict) : verdict,
    lines.join('\n'),
  ];
}

type JudgedReport = DefinitionReport & { judge?: JudgeVerdict };

function reportOf(r: JudgedReport): Report {
  return {
    server: r.server,
    name: r.name,
    kind: r.kind,
    verdict: r.verdict,
    score: Number(r.score.toFixed(3)),
    contributions: r.contributions,
    findings: r.findings,
    ...(r.judge ? { judge: r.judge } : {}),
  };
}

function instructionsReport(server: string, text: string, scanBytes: number | undefined): Report {
  // Instructions are addressed to the model by design: the cue rules judge them, not the model fitted on tools.
  const findings = scanText(text, { kind: 'instructions', server }, { scanBytes });
  return { server, name: '(instructions)', kind: 'instructions', verdict: verdictOf(findings), findings };
}

async function scanFile(
  options: ScanOptions,
): Promise<{ reports: Report[]; environments: ServerEnvironment[] }> {
  const file = loadDefinitionsFile(options.tools!);
  // The file alone needs no configuration, but the judge and the limits come from it when there is one.
  const config = options.judge || options.config ? await loadCliConfig(options) : undefined;
  const scanBytes = config?.limits.scanBytes;
  const scans = scanCatalog(file.definitions, { scanBytes });
  const judged = options.judge ? await judge(config!, file.definitions, scans) : scans;
  const reports = judged.map(reportOf);
  for (const [server, text] of Object.entries(file.instructions))
    reports.push(instructionsReport(server, text, scanBytes));
  return { reports, environments: [] };
}

/** Every definition the host's servers offer: tools, prompts, resources and resource templates. */
function hostDefinitionsToScan(host: McpHost): ScannableDefinition[] {
  const out: ScannableDefinition[] = [];
  for (const listing of host.catalog.servers) {
    for (const t of listing.tools)
      out.push({
        kind: 'tool',
        server: listing.server,
        name: t.name,
        ...(t.title ? { title: t.title } : {}),
        ...(t.description ? { description: t.description } : {}),
        inputSchema: t.inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
        ...(t.annotations ? { annotations: t.annotations } : {}),
      });
    for (const p of listing.prompts)
      out.push({
        kind: 'prompt',
        server: listing.server,
        name: p.name,
        ...(p.title ? { title: p.title } : {}),
        ...(p.description ? { description: p.description } : {}),
        ...(p.arguments ? { arguments: p.arguments } : {}),
      });
    for (const r of [...listing.resources, ...listing.resourceTemplates])
      out.push({
        kind: 'resource',
        server: listing.server,
        name: r.name,
        uri: 'uri' in r ? r.uri : r.uriTemplate,
        ...(r.title ? { title: r.title } : {}),
        ...(r.description ? { description: r.description } : {}),
      });
  }
  return out;
}

async function scanServers(
  options: ScanOptions,
): Promise<{ reports: Report[]; environments: ServerEnvironment[] }> {
  return withHost(options, undefined, async (host, _signal, config) => {
    const definitions = hostDefinitionsToScan(host);
    const scans = scanCatalog(definitions, { scanBytes: config.limits.scanBytes });
    const judged = options.judge ? await judge(config, definitions, scans, host.store) : scans;
    const reports = judged.map(reportOf);
    for (const server of host.servers())
      if (server.instructions)
        reports.push(instructionsReport(server.name, server.instructions, config.limits.scanBytes));
    pushAll(reports, packageReports(config, host));
    return { reports, environments: environmentsOf(config) };
  });
}

/**
 * The grey definitions judged by `scan.judge.model` (verdicts cached in the store: the host's when servers were
 * started, else the store opened here). A judgement that fails leaves its definition's static verdict, with a
 * warning.
 */
async function judge(
  config: TackConfig,
  definitions: readonly ScannableDefinition[],
  scans: DefinitionReport[],
  hostStore?: TackStore | undefined,
): Promise<JudgedReport[]> {
  const settings = config.scan.judge;
  if (!settings)
    throw new TackError('USAGE', '--judge needs a judge model: scan.judge.model is not set', {
      hint: 'Set "scan": { "judge": { "model": "anthropic:<id>" } } in tack.json (docs/security.md).',
    });
  const grey = scans.filter((s) => s.grey).length;
  const limit = settings.maxDefinitions ?? 200;
  if (grey > limit) warn(`scan judge: ${grey} definitions are in doubt; judging the first ${limit}`);
  const opened = hostStore
    ? undefined
    : await openStore(config, (w) => warn(`scan judge: verdicts are not cached: ${w.message}`));
  const store = hostStore ?? opened;
  try {
    let taken = 0;
    const items = definitions.map((definition, i) => {
      const scan = scans[i]!;
      return { definition, scan: scan.grey && taken++ < limit ? scan : { ...scan, grey: false } };
    });
    const verdicts = await judgeGrey(items, {
      call: judgeCall(settings.model, process.env, settings.timeoutMs ?? 60_000),
      model: settings.model,
      cache: store?.scanJudgements,
      onError: (error, d) =>
        warn(`scan judge: ${d.server}/${d.name} keeps its static verdict: ${(error as Error).message}`),
    });
    return scans.map((scan, i) => {
      const verdict = verdicts.get(i);
      if (!verdict) return scan;
      const judged = applyJudge(scan, verdict, {
        kind: scan.kind === 'prompt' ? 'prompt' : scan.kind === 'resource' ? 'resource' : 'tool-description',
        server: scan.server,
        name: scan.name,
      });
      return { ...judged, judge: verdict };
    });
  } finally {
    await opened?.close();
  }
}

/**
 * Each stdio server whose command runs a package runner without a fixed version (`npx -y pkg`): a medium
 * `unpinned-package` finding with the command that pins it, at the version that ran when the server started.
 */
function packageReports(config: TackConfig, host: McpHost): Report[] {
  const ran = new Map(host.servers().map((s) => [s.name, s.package?.version]));
  return config.servers.flatMap((server) => {
    const spec = server.transport === 'stdio' ? packageRunnerSpec(server.command, server.args) : undefined;
    const finding = spec && unpinnedPackageFinding(server.name, { ...spec, version: ran.get(server.name) });
    return finding
      ? [
          {
            server: server.name,
            name: spec.package,
            kind: 'package' as const,
            verdict: 'warn' as const,
            findings: [finding],
          },
        ]
      : [];
  });
}

/** From the function the stdio transport spawns with, so the listing is what the processes really get. */
function environmentsOf(config: TackConfig): ServerEnvironment[] {
  return config.servers.flatMap((server) =>
    server.transport === 'stdio'
      ? [{ server: server.name, enabled: server.enabled, variables: stdioEnvironment(server).variables }]
      : [],
  );
}

function describeEnvironments(environments: readonly ServerEnvironment[]): string {
  const names = (e: ServerEnvironment, source: EnvSource) =>
    e.variables.filter((v) => v.source === source).map((v) => v.name);
  const lines = environments.map((e) => {
    const parts = [`${names(e, 'safe-default').join(', ') || '(none)'} (safe default)`];
    const configured = names(e, 'configured');
    if (configured.length > 0) parts.push(`${configured.join(', ')} (configured)`);
    const sandbox = names(e, 'sandbox');
    if (sandbox.length > 0) parts.push(`${sandbox.join(', ')} (its sandbox)`);
    return `  ${e.server}${e.enabled ? '' : ' (disabled)'}: ${parts.join('; ')}`;
  });
  return [
    "Environment of stdio servers (names only; nothing else of tack's environment is passed on):",
    ...lines,
  ].join('\n');
}
