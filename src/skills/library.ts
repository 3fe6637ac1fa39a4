import { stat } from 'node:fs/promises';
import { TackError } from '../errors.js';
import { scanSkillTexts } from '../security/scan-skill.js';
import { pushAll } from '../util/arrays.js';
import { walkTree } from '../util/walk-tree.js';
import { readPrefix } from './bounded-read.js';
import { type DiscoveredSkill, type DiscoverOptions, discoverSkills, type SkillScope } from './discover.js';
import { resolveInside, skillFileError } from './inside-skill.js';
import { heldText, scanSkill } from './scan.js';
import { folderName, MAX_SKILL_BYTES, oversizedText, readSkill } from './skill.js';
import { type SkillIssue, type SkillVerdict, skillVerdict } from './validate.js';

/** One skill the library offers: what tier 1 shows, and where the rest is. */
export interface SkillEntry {
  name: string;
  description: string;
  /** The skill folder (absolute, symlinks resolved). */
  dir: string;
  /** Its SKILL.md. */
  file: string;
  scope: SkillScope | 'server';
  /** Where the model is told the skill lives, when not `dir` (a served skill: its skill:// root). */
  location?: string;
  /** Set for a skill an MCP server serves (remote.ts): its files are read over MCP, not from disk. */
  remote?: RemoteSkill;
}

/**
 * A skill found on disk that the validator calls invalid (validate.ts, skillVerdict): it is not offered to the
 * model, served or counted, and every listing shows it with `errors`, the reasons.
 */
export interface InvalidSkill {
  /** Its front matter's name when it has one, else its folder's. */
  name: string;
  dir: string;
  file: string;
  scope: SkillScope;
  errors: SkillIssue[];
}

/** A skill served over MCP: what the library needs to show its body and files. */
export interface RemoteSkill {
  server: string;
  /** Its SKILL.md URI. */
  uri: string;
  body(): Promise<string>;
  files(): Promise<string[]>;
  /** The file's bytes, verified against the server's entry. */
  read(path: string): Promise<Uint8Array>;
}

export interface SkillFileText {
  path: string;
  text: string;
  truncated: boolean;
  binary: boolean;
}

export interface IndexOptions {
  /** Token budget of the whole index (default: 1% of `contextWindow`, or 2,000). */
  budgetTokens?: number;
  contextWindow?: number;
  /** Cap per entry, in tokens (default 200). */
  maxEntryTokens?: number;
  countTokens: (text: string) => Promise<number>;
}

export interface RenderedIndex {
  /** The `<available_skills>` block for the system prompt. */
  text: string;
  tokens: number;
  budgetTokens: number;
  entries: Array<{ name: string; tokens: number; shortened: boolean }>;
  /** Skills whose description was cut to fit, and skills left out, so the caller can say so. */
  shortened: string[];
  dropped: string[];
}

const MAX_FILE_BYTES = 256 * 1024;
/** How deep a skill's files are listed (its folder is 0). */
const SKILL_FILES_DEPTH = 4;
const VERDICT_BATCH = 256;
const MAX_LISTED_FILES = 200;

/**
 * Agent Skills with progressive disclosure. Tier 1: `renderIndex()`, name and description of every skill within
 * a token budget. Tier 2: `activate()`, the SKILL.md body with the skill's folder and files. Tier 3:
 * `readFile()` and (scripts.ts) `runScript()`, only inside the skill's folder.
 */
export class SkillLibrary {
  /** The skills offered: valid ones, in precedence order. */
  readonly skills: readonly SkillEntry[];
  readonly warnings: readonly string[];
  /** Skills found but invalid, with the reasons: listed, never offered. */
  readonly invalid: readonly InvalidSkill[];
  readonly #byName: ReadonlyMap<string, SkillEntry>;
  /** Skills the poisoning scan holds (found at activation or at a file read): their files are not read either. */
  readonly #held = new Set<string>();
  readonly #clear = new Set<string>();

  constructor(
    skills: readonly SkillEntry[],
    warnings: readonly string[] = [],
    invalid: readonly InvalidSkill[] = [],
  ) {
    this.skills = skills;
    this.warnings = warnings;
    this.invalid = invalid;
    this.#byName = new Map(skills.map((skill) => [skill.name, skill]));
  }

  /**
   * Finds the skills of every scope (discover.ts) and takes the validator's verdict on each (skillVerdict): an
   * invalid one goes to `invalid`, with a warning that names it and says why.
   */
  static async discover(options: DiscoverOptions = {}): Promise<SkillLibrary> {
    const discovery = await discoverSkills(options);
    const warnings = [...discovery.warnings];
    const skills: SkillEntry[] = [];
    const invalid: InvalidSkill[] = [];
    // In batches: each verdict awaits the SDK's check (servable.ts), and one at a time the waits add up.
    const verdicts: SkillVerdict[] = [];
    for (let i = 0; i < discovery.skills.length; i += VERDICT_BATCH) {
      const batch = discovery.skills.slice(i, i + VERDICT_BATCH);
      pushAll(verdicts, await Promise.all(batch.map((found) => skillVerdict(found.source))));
    }
    for (const [i, found] of discovery.skills.entries()) {
      const verdict = verdicts[i]!;
      const entry = verdict.valid ? toEntry(found) : undefined;
      if (entry) {
        skills.push(entry);
        continue;
      }
      const skill: InvalidSkill = {
        name: found.source.name ?? folderName(found.source),
        dir: found.source.dir,
        file: found.source.file,
        scope: found.scope,
        errors: verdict.errors,
      };
      invalid.push(skill);
      warnings.push(`${skill.file}: ${invalidText(skill)}`);
    }
    return new SkillLibrary(skills, warnings, invalid);
  }

  /** A valid skill by its name. */
  get(name: string): SkillEntry | undefined {
    return this.#byName.get(name);
  }

  /** The skill `name`, or an error that says why it is not offered, or lists the ones there are. */
  require(name: string): SkillEntry {
    const skill = this.#byName.get(name);
    if (skill) return skill;
    const invalid = this.invalid.find((s) => s.name === name);
    if (invalid) {
      throw new TackError('UNKNOWN_SKILL', invalidText(invalid), {
        hint: 'tack skills validate shows each problem with its file and line.',
      });
    }
    throw new TackError('UNKNOWN_SKILL', `no skill named "${name}"`, {
      hint: this.skills.length
        ? `Skills: ${this.skills.map((s) => s.name).join(', ')}.`
        : 'No skills were found.',
    });
  }

  /**
   * Tier 1, within the budget. Each entry is capped first. When the whole does not fit, every description is
   * cut to its first sentence; if that still does not fit, to fifteen words; only then are skills dropped,
   * from the end (the lowest precedence). The result says which. Entries are counted in precedence order
   * only until the budget is reached, so 10,000 skills cost as much to index as the few dozen that fit.
   */
  async renderIndex(options: IndexOptions): Promise<RenderedIndex> {
    const budget = options.budgetTokens ?? Math.floor((options.contextWindow ?? 200_000) * 0.01);
    const cap = options.maxEntryTokens ?? 200;
    const count = options.countTokens;
    const frame = await count(renderIndexText([]));
    const capped = new Map<SkillEntry, { description: string; tokens: number; shortened: boolean }>();
    const cappedEntry = async (skill: SkillEntry) => {
      let entry = capped.get(skill);
      if (entry) return entry;
      let description = skill.description;
      let tokens = await count(renderEntry(skill, description));
      for (const cut of [firstSentence, (d: string) => words(d, 40), (d: string) => words(d, 15)]) {
        if (tokens <= cap) break;
        description = cut(description);
        tokens = await count(renderEntry(skill, description));
      }
      entry = { description, tokens, shortened: description !== skill.description };
      capped.set(skill, entry);
      return entry;
    };
    const levels: Array<(d: string) => string> = [(d) => d, firstSentence, (d) => words(d, 15)];
    let chosen: Array<{ skill: SkillEntry; description: string; tokens: number; shortened: boolean }> = [];
    for (const [level, cut] of levels.entries()) {
      chosen = [];
      let total = frame;
      for (const skill of this.skills) {
        const base = await cappedEntry(skill);
        const description = cut(base.description);
        const tokens =
          description === base.description ? base.tokens : await count(renderEntry(skill, description));
        total += tokens + 1; // + the newline between entries
        if (total > budget) break;
        chosen.push({
          skill,
          description,
          tokens,
          shortened: base.shortened || description !== base.description,
        });
      }
      if (chosen.length === this.skills.length || level === levels.length - 1) break;
    }
    // The sum of the parts estimates the whole; the exact count of the text has the last word.
    let text = renderIndexText(chosen);
    let tokens = await count(text);
    while (tokens > budget && chosen.length > 0) {
      chosen.pop();
      text = renderIndexText(chosen);
      tokens = await count(text);
    }
    return {
      text,
      tokens,
      budgetTokens: budget,
      entries: chosen.map((e) => ({ name: e.skill.name, tokens: e.tokens, shortened: e.shortened })),
      shortened: chosen.filter((e) => e.shortened).map((e) => e.skill.name),
      dropped: this.skills.slice(chosen.length).map((s) => s.name),
    };
  }

  /**
   * Tier 2: the SKILL.md body, wrapped with the skill's folder and its files. `active` is the session's set of
   * active skills: a skill already in it is not loaded twice.
   */
  async activate(
    name: string,
    active?: Set<string>,
  ): Promise<{ text: string; alreadyActive: boolean; files: string[] }> {
    const skill = this.require(name);
    if (active?.has(name)) {
      return {
        text: `Skill '${name}' is already active: its instructions are above.`,
        alreadyActive: true,
        files: [],
      };
    }
    const body = await this.#body(skill);
    const files = await this.listFiles(name);
    if (body.loaded) active?.add(name);
    const text = [
      `<skill name="${escapeXml(name)}" folder="${escapeXml(skill.location ?? skill.dir)}">`,
      body.text.trim(),
      '',
      `<skill_files count="${files.length}">`,
      ...files.slice(0, MAX_LISTED_FILES),
      ...(files.length > MAX_LISTED_FILES ? [`... and ${files.length - MAX_LISTED_FILES} more`] : []),
      '</skill_files>',
      'Read a file with read_skill_file; run a script from scripts/ with run_skill_script.',
      '</skill>',
    ].join('\n');
    return { text, alreadyActive: false, files };
  }

  /**
   * The SKILL.md body, or (`loaded` false) why it is not loaded: a SKILL.md past MAX_SKILL_BYTES, on disk or
   * from a server, is not read past its front matter, and the text says so to the model and to the user.
   */
  async #body(skill: SkillEntry): Promise<{ text: string; loaded: boolean }> {
    if (skill.remote) {
      const text = await skill.remote.body();
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_SKILL_BYTES) return { text: `[${oversizedText(bytes)}.]`, loaded: false };
      // A served skill's body is all there is to scan here: its files are read over MCP one at a time.
      const scan = scanSkillTexts([{ file: skill.location ?? skill.file, text, firstLine: 1, kind: 'body' }]);
      return scan.verdict === 'block'
        ? { text: heldText(skill.name, scan), loaded: false }
        : { text, loaded: true };
    }
    const source = await readSkill(skill.dir);
    if (source.oversized !== undefined)
      return { text: `[${oversizedText(source.oversized)}.]`, loaded: false };
    // The poisoning scan holds a blocked skill's instructions back: the model is told why, and so is the user.
    const scan = await scanSkill(source);
    if (scan.verdict === 'block') {
      this.#held.add(skill.name);
      this.#clear.delete(skill.name);
    } else {
      this.#held.delete(skill.name);
      this.#clear.add(skill.name);
    }
    return scan.verdict === 'block'
      ? { text: heldText(skill.name, scan, skill.dir), loaded: false }
      : { text: source.frontMatter.body, loaded: true };
  }

  /** Every file of the skill, as paths relative to its folder (dot-files and symlinks left out). */
  async listFiles(name: string): Promise<string[]> {
    const skill = this.require(name);
    if (skill.remote) return skill.remote.files();
    const files: string[] = [];
    const tree = walkTree(skill.dir, {
      maxDepth: SKILL_FILES_DEPTH,
      skipDir: (name) => name.startsWith('.') || name === 'node_modules',
    });
    try {
      for (const { rel, name, kind } of tree) if (kind === 'file' && !name.startsWith('.')) files.push(rel);
    } catch {
      // A skill folder that cannot be read lists no files, as one that is gone.
    }
    return files;
  }

  /** Tier 3: a file inside the skill's folder, by its path relative to that folder. */
  async readFile(name: string, path: string): Promise<SkillFileText> {
    const skill = this.require(name);
    // Not only after a held activation: a model may ask for a file of a skill it never activated. A skill found
    // clean is not scanned again for each of its files (activation scans it anew).
    if (!skill.remote && !this.#held.has(name) && !this.#clear.has(name)) {
      const blocked = (await scanSkill(await readSkill(skill.dir))).verdict === 'block';
      (blocked ? this.#held : this.#clear).add(name);
    }
    if (this.#held.has(name))
      throw skillFileError(name, path, 'is not read: the poisoning scan holds this skill');
    if (skill.remote) return fileText(path, await skill.remote.read(path));
    const target = await resolveInside(skill, path);
    const info = await stat(target);
    if (!info.isFile()) throw skillFileError(name, path, 'is not a file');
    // Read up to the cap only (and one byte more, to know it was cut): a file's size is no reason to read it.
    const { bytes, size } = await readPrefix(target, MAX_FILE_BYTES + 1);
    return fileText(path, bytes, size);
  }

  /** This library with `more` skills after its own (a name already taken is skipped, with a warning). */
  with(more: readonly SkillEntry[], warnings: readonly string[] = []): SkillLibrary {
    const skipped = more.filter((s) => this.#byName.has(s.name));
    return new SkillLibrary(
      [...this.skills, ...more.filter((s) => !this.#byName.has(s.name))],
      [
        ...this.warnings,
        ...warnings,
        ...skipped.map(
          (s) => `skill '${s.name}' from ${s.file} is shadowed by ${this.#byName.get(s.name)!.file}`,
        ),
      ],
      this.invalid,
    );
  }
}

/**
 * A file as the model reads it: a binary file (one with a NUL byte in what was read) named, not shown; text
 * capped. `size` is the whole file's, when only its head was read.
 */
function fileText(path: string, bytes: Uint8Array, size = bytes.length): SkillFileText {
  if (bytes.includes(0)) {
    return { path, text: `[binary file, ${size} bytes: not shown]`, truncated: false, binary: true };
  }
  const truncated = size > MAX_FILE_BYTES;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, MAX_FILE_BYTES)).toString(
    'utf8',
  );
  return {
    path,
    text: truncated ? `${text}\n[... truncated at ${MAX_FILE_BYTES} bytes of ${size}]` : text,
    truncated,
    binary: false,
  };
}

/** Why an invalid skill is not offered, in one sentence (every listing and the library's warnings say this). */
export function invalidText(skill: Pick<InvalidSkill, 'name' | 'errors'>): string {
  const reasons = skill.errors.map((e) => e.message);
  return `skill '${skill.name}' is invalid and not offered: ${reasons.join('; ')}`;
}

/** ` (2 invalid skills not served: a, b)`, or nothing: what serve-skills and tack serve add to their count. */
export function notServedText(invalid: readonly Pick<InvalidSkill, 'name'>[]): string {
  if (invalid.length === 0) return '';
  const names = invalid.slice(0, 5).map((s) => s.name);
  const more = invalid.length > 5 ? ` and ${invalid.length - 5} more` : '';
  return ` (${invalid.length} invalid skill${invalid.length === 1 ? '' : 's'} not served: ${names.join(', ')}${more})`;
}

function toEntry(found: DiscoveredSkill): SkillEntry | undefined {
  const { name, description, dir, file } = found.source;
  if (!name || !description) return undefined;
  return { name, description, dir, file, scope: found.scope };
}

export function renderIndexText(entries: ReadonlyArray<{ skill: SkillEntry; description: string }>): string {
  if (entries.length === 0) return '<available_skills>\n</available_skills>';
  return [
    '<available_skills>',
    ...entries.map((e) => renderEntry(e.skill, e.description)),
    '</available_skills>',
  ].join('\n');
}

/** One skill's entry in the index, in the skills-ref format (what other hosts emit too). */
export function renderEntry(skill: SkillEntry, description: string): string {
  return [
    '<skill>',
    `<name>${escapeXml(skill.name)}</name>`,
    `<description>${escapeXml(description)}</description>`,
    `<location>${escapeXml(skill.file)}</location>`,
    '</skill>',
  ].join('\n');
}

function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(\s|$)/.exec(text);
  return match ? match[1]! : text;
}

function words(text: string, count: number): string {
  const all = text.split(/\s+/);
  return all.length <= count ? text : `${all.slice(0, count).join(' ')}…`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
