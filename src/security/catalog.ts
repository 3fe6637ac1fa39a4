/**
 * Checks that need the whole catalog, not one definition: a tool that copies the purpose of another server's tool
 * (overlap by what the descriptions say, and names that differ only by look-alike letters or separators), and
 * such a copy that also claims to be the better choice (preference claims competing for the same task). A
 * definition's text naming another server's tools is found per definition (evidence.ts `catalog-tool`, the cue
 * scanner's `tool-shadowing`), from the same catalog.
 *
 * Cost: linear in the catalog. Each tool is reduced to at most MAX_TERMS distinct words; an inverted index finds
 * the tools that share words, and a word held by more than COMMON_SHARE of the tools (at least COMMON_FLOOR, at most
 * COMMON_CAP) is not followed, so no tool looks at more than MAX_TERMS * COMMON_CAP holders, however large the
 * catalog (test/security/catalog.test.ts counts it).
 */
import { nameWords } from './evidence.js';
import { type CatalogSignal, type ScannableTool, type ScanOptions, scanTool, type ToolScan } from './scan.js';
import { clip } from './scan-normalize.js';

export type DefinitionKind = 'tool' | 'prompt' | 'resource';

/** A tool, prompt or resource definition as a server offers it, for `scanCatalog`. */
export interface ScannableDefinition extends ScannableTool {
  /** Default `tool`. */
  kind?: DefinitionKind | undefined;
  /** A resource's URI (shown with its report; its name, title and description are what is scanned). */
  uri?: string | undefined;
}

/** The scan of one definition weighed against the whole catalog. */
export interface DefinitionReport extends ToolScan {
  server: string;
  name: string;
  kind: DefinitionKind;
}

/** Distinct words of one tool that are compared. */
const MAX_TERMS = 48;
/** A word in more than this share of the catalog's tools (or COMMON_FLOOR tools) tells nothing about purpose. */
const COMMON_SHARE = 0.05;
const COMMON_FLOOR = 25;
const COMMON_CAP = 200;
/** Candidates looked at per tool, at most. */
const MAX_CANDIDATES = 200;
/** Shared words over all words (Jaccard) from which two tools do the same job. */
export const OVERLAP = 0.5;
/** A lower bar when the tool also claims to be the better choice. */
const COMPETING = 0.3;

const STOP = new Set(
  'a an and are as at be by can for from has have in is it its of on or that the this to use used uses using was will with you your which when what all any each if not no only one two into than then them they their there these those should must may also more most other such via per get gets returns return given based'.split(
    ' ',
  ),
);

/** A word as compared: lower case, a plural's `s` dropped. */
function term(word: string): string {
  return word.length > 4 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** The words that say what a tool does: its name's words and the opening of its description. */
function termsOf(tool: ScannableTool): string[] {
  const out = new Set<string>();
  for (const w of nameWords(tool.name)) if (!STOP.has(w)) out.add(term(w));
  const text = (tool.description ?? '').slice(0, 600).toLowerCase();
  for (const m of text.matchAll(/[a-z][a-z0-9]{2,30}/g)) {
    if (out.size >= MAX_TERMS) break;
    if (!STOP.has(m[0])) out.add(term(m[0]));
  }
  return [...out];
}

// Letters that look like Latin ones in Cyrillic and Greek: a name made of them passes for the Latin one.
const LOOK_ALIKE: Readonly<Record<string, string>> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  τ: 't',
  ι: 'i',
  κ: 'k',
};

/** A name as it looks: look-alike letters made Latin, case and separators dropped, `0`/`1` read as `o`/`l`. */
export function nameSkeleton(name: string): string {
  let out = '';
  for (const ch of name.normalize('NFKC').toLowerCase()) {
    const mapped = LOOK_ALIKE[ch] ?? ch;
    if (/[a-z]/.test(mapped)) out += mapped;
    else if (mapped === '0') out += 'o';
    else if (mapped === '1') out += 'l';
    else if (/\d/.test(mapped)) out += mapped;
  }
  return out;
}

/** Superlatives, exclusivity or a claiming name: the tool says it is the one to use. */
const PREFERENCE_RE =
  /\b(?:best|only\s+(?:reliable|accurate|trusted|official)|most\s+(?:reliable|accurate|trusted|advanced|powerful|comprehensive)|ultimate|official|preferred|recommended|superior|unmatched|unparalleled|premium|verified|trusted|instead\s+of|rather\s+than|always\s+use|prefer\s+this|ignore\s+(?:all\s+|any\s+)?other)\b/i;

/**
 * What the catalog says about each definition, by index: `catalog-overlap` (another server's tool does the same
 * job, or its name looks the same) and `catalog-competing-claim` (such a tool that also claims to be the better
 * choice). Siblings on one server are never compared: a server may offer variants of its own tools.
 */
export function catalogSignals(
  tools: readonly ScannableTool[],
  /** Counted into when given: the holders looked at, for the linearity test. */
  work?: { looked: number },
): Map<number, CatalogSignal[]> {
  const out = new Map<number, CatalogSignal[]>();
  const add = (i: number, signal: CatalogSignal) => {
    const list = out.get(i) ?? [];
    if (!list.some((s) => s.code === signal.code)) list.push(signal);
    out.set(i, list);
  };
  const terms = tools.map(termsOf);
  const index = new Map<string, number[]>();
  terms.forEach((list, i) => {
    for (const t of list) {
      const holders = index.get(t);
      if (holders) holders.push(i);
      else index.set(t, [i]);
    }
  });
  const common = Math.min(COMMON_CAP, Math.max(COMMON_FLOOR, Math.ceil(COMMON_SHARE * tools.length)));
  const claims = tools.map((t) =>
    PREFERENCE_RE.test(`${nameWords(t.name).join(' ')} ${(t.description ?? '').slice(0, 600)}`),
  );

  for (let i = 0; i < tools.length; i++) {
    const shared = new Map<number, number>();
    for (const t of terms[i]!) {
      const holders = index.get(t)!;
      if (holders.length > common) continue;
      if (work) work.looked += holders.length;
      for (const j of holders) {
        if (j === i || tools[j]!.server === tools[i]!.server) continue;
        if (shared.size >= MAX_CANDIDATES && !shared.has(j)) continue;
        shared.set(j, (shared.get(j) ?? 0) + 1);
      }
    }
    let best: { j: number; similarity: number } | undefined;
    for (const [j, count] of shared) {
      const similarity = count / (terms[i]!.length + terms[j]!.length - count);
      if (!best || similarity > best.similarity) best = { j, similarity };
    }
    if (!best) continue;
    const other = tools[best.j]!;
    const percent = Math.round(best.similarity * 100);
    const what = `${other.server}/${other.name} (${percent}% of the words that say what they do are shared)`;
    if (best.similarity >= OVERLAP)
      add(i, {
        code: 'catalog-overlap',
        field: 'description',
        message: `does the same job as ${what}: a copy can take its calls`,
        match: clip((tools[i]!.description ?? tools[i]!.name).slice(0, 160)),
      });
    if (claims[i] && best.similarity >= COMPETING)
      add(i, {
        code: 'catalog-competing-claim',
        field: 'description',
        message: `claims to be the better choice for the job of ${what}`,
        match: clip((tools[i]!.description ?? tools[i]!.name).slice(0, 160)),
      });
  }

  // Names that look the same on two servers (`read_data` and a Cyrillic `reаd_data`, `readData`).
  const byLook = new Map<string, number[]>();
  tools.forEach((t, i) => {
    const skeleton = nameSkeleton(t.name);
    if (skeleton.length < 3) return;
    const list = byLook.get(skeleton);
    if (list) list.push(i);
    else byLook.set(skeleton, [i]);
  });
  for (const list of byLook.values()) {
    if (list.length < 2 || list.length > COMMON_FLOOR) continue;
    for (const i of list) {
      const other = list.find(
        (j) => tools[j]!.server !== tools[i]!.server && tools[j]!.name !== tools[i]!.name,
      );
      if (other === undefined) continue;
      add(i, {
        code: 'catalog-overlap',
        field: 'name',
        message: `its name looks like ${tools[other]!.server}/${tools[other]!.name}: one can pass for the other`,
        match: clip(tools[i]!.name),
      });
    }
  }
  return out;
}

/**
 * Scans every definition of a catalog as `tack scan` does: each with the catalog's other tools and servers known
 * (naming a sibling on the same server is documentation, naming another server's tool is a sign) and with what the
 * catalog checks found for it.
 */
export function scanCatalog(
  definitions: readonly ScannableDefinition[],
  options: Omit<ScanOptions, 'knownTools' | 'knownServers' | 'catalogSignals'> = {},
): DefinitionReport[] {
  const knownTools = definitions
    .filter((d) => (d.kind ?? 'tool') === 'tool')
    .map((d) => `${d.server}__${d.name}`);
  const knownServers = [...new Set(definitions.map((d) => d.server))];
  const tools = definitions.map((d, i) => ({ d, i })).filter(({ d }) => (d.kind ?? 'tool') === 'tool');
  const signals = catalogSignals(tools.map(({ d }) => d));
  const byIndex = new Map(tools.map(({ i }, k) => [i, signals.get(k) ?? []]));
  return definitions.map((d, i) => ({
    server: d.server,
    name: d.name,
    kind: d.kind ?? 'tool',
    ...scanTool(d, { ...options, knownTools, knownServers, catalogSignals: byIndex.get(i) ?? [] }),
  }));
}
