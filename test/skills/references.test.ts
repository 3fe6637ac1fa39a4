import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';
import { SkillLibrary } from '../../src/skills/library.js';
import { codeSpans, findReferences } from '../../src/skills/references.js';
import { readSkill } from '../../src/skills/skill.js';
import { skillVerdict, validatePaths, validateSkill, verdictOf } from '../../src/skills/validate.js';
import { REPO, tempProject } from '../helpers/project.js';

const REPORTED = join(REPO, 'test', 'fixtures', 'skills', 'reported');
const INVALID = join(REPO, 'test', 'fixtures', 'skills', 'invalid');
const REAL = join(REPO, 'examples', 'skills', 'anthropics');
const TEAM = join(REPO, 'examples', 'skills', 'team');

/** A skill folder with these files (paths relative to it), in a temporary project. */
function skill(root: string, name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const head = (name: string) => `---\nname: ${name}\ndescription: Tests references. Use when testing.\n---\n`;

async function messages(dir: string): Promise<string[]> {
  const issues = await validateSkill(await readSkill(dir));
  return issues.map((i) => `${relative(dir, i.file)}:${i.line}: ${i.message}`);
}

describe('the cases reported on anthropics/skills (issue 29, point 9)', () => {
  it('validate gives exactly these findings, and no other', async () => {
    const { issues } = await validatePaths([REPORTED]);
    expect(issues.map((i) => `${relative(REPORTED, i.file)}:${i.line}: ${i.severity}: ${i.message}`)).toEqual(
      [
        'claude-api/SKILL.md:3: error: Description exceeds 1024 character limit (1068 chars)',
        'claude-api/shared/managed-agents-overview.md:3: warning: shared/managed-agents-overview.md refers on to a file SKILL.md does not reference (shared/managed-agents-core.md): keep file references one level deep from SKILL.md (reference it from SKILL.md, or fold it into shared/managed-agents-overview.md)',
        'pdf/SKILL.md:8: warning: Referenced file REFERENCE.md not found; reference.md exists — names are case-sensitive on Linux: write reference.md',
        'pdf/SKILL.md:8: warning: Referenced file FORMS.md not found; forms.md exists — names are case-sensitive on Linux: write forms.md',
      ],
    );
  });

  it('example paths in code are not references; the same paths in prose are', async () => {
    using p = tempProject();
    const inCode = skill(p.dir, 'in-code', {
      'SKILL.md': `${head('in-code')}Add it to \`word/_rels/document.xml.rels\`:\n\`\`\`xml\n<Relationship Target="media/image1.png"/>\n\`\`\`\n`,
    });
    expect(await messages(inCode)).toEqual([]);
    const inProse = skill(p.dir, 'in-prose', {
      'SKILL.md': `${head('in-prose')}Add it to word/_rels/document.xml.rels, then see [the image](media/image1.png).\n`,
    });
    expect(await messages(inProse)).toEqual([
      'SKILL.md:5: Referenced file does not exist: media/image1.png',
      'SKILL.md:5: Referenced file does not exist: word/_rels/document.xml.rels',
    ]);
  });

  it("a path in code counts when it starts in one of the skill's folders or the spec's scripts/, references/, assets/", async () => {
    using p = tempProject();
    const dir = skill(p.dir, 'code-paths', {
      'SKILL.md': `${head('code-paths')}\`\`\`bash\npython scripts/missing.py\npython tools/gone.py\npython other/thing.py\n\`\`\`\nSee \`assets/logo.png\`.\n`,
      'tools/present.py': '',
    });
    expect(await messages(dir)).toEqual([
      'SKILL.md:6: Referenced file does not exist: scripts/missing.py',
      'SKILL.md:7: Referenced file does not exist: tools/gone.py',
      'SKILL.md:10: Referenced file does not exist: assets/logo.png',
    ]);
  });

  it('link syntax in code and a block labelled markdown are examples; a link outside code always counts', async () => {
    using p = tempProject();
    const dir = skill(p.dir, 'links', {
      'SKILL.md': `${head('links')}~~~markdown\nSee [the guide](references/GUIDE.md), run scripts/a.py.\n\`\`\`\nstill in the block: [x](references/X.md)\n~~~\nWrite \`[guide](references/Y.md)\`.\n\`\`\`text\n[z](references/Z.md)\n\`\`\`\nSee [the notes](notes/NOTES.md).\n`,
    });
    expect(await messages(dir)).toEqual(['SKILL.md:14: Referenced file does not exist: notes/NOTES.md']);
  });

  it('a bare name counts only when the folder has it in another case; a word with a dot never does', async () => {
    using p = tempProject();
    const dir = skill(p.dir, 'names', {
      'SKILL.md': `${head('names')}Read FORMS.md, forms.md and Notes.MD. Uses p5.js and e.g. claude.ai, version 4.8.\n`,
      'forms.md': '# Forms\n',
      'notes.md': '# Notes\n',
    });
    expect(await messages(dir)).toEqual([
      'SKILL.md:5: Referenced file FORMS.md not found; forms.md exists — names are case-sensitive on Linux: write forms.md',
      'SKILL.md:5: Referenced file Notes.MD not found; notes.md exists — names are case-sensitive on Linux: write notes.md',
    ]);
  });

  it('a case mismatch in a folder of the path is found too, and reported once per path', async () => {
    using p = tempProject();
    const dir = skill(p.dir, 'folders', {
      'SKILL.md': `${head('folders')}Run \`python Scripts/fill.py\`.\nAgain: \`python Scripts/fill.py\`.\n`,
      'scripts/fill.py': '',
    });
    expect(await messages(dir)).toEqual([
      'SKILL.md:5: Referenced file Scripts/fill.py not found; scripts/fill.py exists — names are case-sensitive on Linux: write scripts/fill.py',
    ]);
  });

  it('depth is reference chains, not folders: one finding per file that sends the reader on', async () => {
    using p = tempProject();
    const dir = skill(p.dir, 'chains', {
      'SKILL.md': `${head('chains')}Read a/b/c/deep.md, [the hub](hub.md) and \`shared/direct.md\`.\n`,
      'a/b/c/deep.md': 'Nothing further.\n',
      // Names two files SKILL.md does not (one relative to its own folder, one from the skill root), one it
      // does, itself, SKILL.md and a script: only the first two are a chain.
      'hub.md':
        'See shared/direct.md and [more](shared/more.md).\nThen `shared/other.md`, hub.md, SKILL.md, scripts/run.py.\n',
      'shared/direct.md': '[more](more.md)\n',
      'shared/more.md': '',
      'shared/other.md': '',
      'scripts/run.py': '',
    });
    expect(await messages(dir)).toEqual([
      'hub.md:1: hub.md refers on to 2 files SKILL.md does not reference (shared/more.md, shared/other.md): keep file references one level deep from SKILL.md (reference them from SKILL.md, or fold them into hub.md)',
      'shared/direct.md:1: shared/direct.md refers on to a file SKILL.md does not reference (shared/more.md): keep file references one level deep from SKILL.md (reference it from SKILL.md, or fold it into shared/direct.md)',
    ]);
  });

  it('references leading out of the skill are not its files, and nothing is read outside it', async () => {
    using p = tempProject();
    writeFileSync(join(p.dir, 'outside.md'), 'See [the notes](notes.md).\n');
    const dir = skill(p.dir, 'outward', {
      'SKILL.md': `${head('outward')}See [outside](../outside.md), ../x/y.md, [linked](linked.md) and [pipe](pipe.md).\n`,
      'notes.md': '',
    });
    // A link out of the folder, and a FIFO, which reading would block on: named, never read.
    symlinkSync(join(p.dir, 'outside.md'), join(dir, 'linked.md'));
    execFileSync('mkfifo', [join(dir, 'pipe.md')]);
    expect(await messages(dir)).toEqual([]);
  });
});

describe('finding references', () => {
  it('tracks fences: backticks or tildes, an info string, a longer closing fence, an unclosed fence to the end', () => {
    const body = [
      'a/one.md', // 1
      '````sh', // 2
      'a/two.md', // 3
      '```', // 4: shorter than the opening fence, still inside
      'a/three.md', // 5
      '`````', // 6: closes
      '``` not a fence: `x` has a backtick, so it is inline code',
      'a/four.md `a/five.md` ``a/six.md`` `unclosed a/seven.md',
      '~~~',
      'a/eight.md',
    ].join('\n');
    expect(findReferences(body, 1).map((r) => [r.path, r.line, r.code])).toEqual([
      ['a/one.md', 1, false],
      ['a/two.md', 3, true],
      ['a/three.md', 5, true],
      ['a/four.md', 8, false],
      ['a/five.md', 8, true],
      ['a/six.md', 8, true],
      ['a/seven.md', 8, false],
      ['a/eight.md', 10, true],
    ]);
  });

  it('tells links, paths and bare names apart, and leaves out URLs, absolute and home paths', () => {
    const refs = findReferences(
      '[a](./docs/a.md#part) docs/b.md. FORMS.md, https://x.org/c.md /etc/d.md ~/e.md user@host:f.md example.com/g.html',
      1,
    );
    expect(refs.map((r) => [r.kind, r.path])).toEqual([
      ['link', 'docs/a.md'],
      ['path', 'docs/b.md'],
      ['name', 'FORMS.md'],
    ]);
  });

  it('code spans pair runs of equal length, in one pass', () => {
    expect(codeSpans('a `b` c ``d ` e`` f `g')).toEqual([
      [2, 5],
      [8, 17],
    ]);
    // 100,000 runs of ever-changing lengths that never close, and 200 KB of path tokens in code.
    const runs = Array.from({ length: 2_000 }, (_, i) => '`'.repeat((i % 50) + 1)).join(' x ');
    const tokens = `${'`a/b.md` '.repeat(25_000)}`;
    const started = performance.now();
    codeSpans(runs);
    expect(findReferences(tokens, 1)).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('one verdict for a skill', () => {
  /** Every skill folder of a folder of skills (one level down), or of a folder of such folders. */
  function skillDirs(root: string): string[] {
    return readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => {
        const dir = join(root, e.name);
        const inner = readdirSync(dir);
        return inner.includes('SKILL.md') ? [dir] : inner.map((n) => join(dir, n));
      });
  }
  const ALL = [...skillDirs(REPORTED), ...skillDirs(INVALID), ...skillDirs(REAL), ...skillDirs(TEAM)];

  it("the loader's verdict, from the head of each SKILL.md, is the validator's, from the whole", async () => {
    const library = await SkillLibrary.discover({
      home: '/nonexistent',
      configFolders: [REPORTED, REAL, TEAM, ...readdirSync(INVALID).map((d) => join(INVALID, d))],
    });
    const loaded = new Map<string, boolean>([
      ...library.skills.map((s) => [s.dir, true] as const),
      ...library.invalid.map((s) => [s.dir, false] as const),
    ]);
    const { skills, issues } = await validatePaths(ALL);
    const validated = new Map(
      skills.map((s) => [s.dir, verdictOf(issues.filter((i) => i.file.startsWith(`${s.dir}/`))).valid]),
    );
    expect(Object.fromEntries(loaded)).toEqual(Object.fromEntries(validated));
    // And the reported case is invalid for its description, everywhere.
    expect(library.invalid.map((s) => [s.name, s.errors.map((e) => e.message)])).toContainEqual([
      'claude-api',
      ['Description exceeds 1024 character limit (1068 chars)'],
    ]);
    expect(library.warnings).toContain(
      `${join(REPORTED, 'claude-api', 'SKILL.md')}: skill 'claude-api' is invalid and not offered: Description exceeds 1024 character limit (1068 chars)`,
    );
    expect(() => library.require('claude-api')).toThrow(/skill 'claude-api' is invalid and not offered/);
  });

  it('a skill tack calls valid is one the MCP Skills extension takes, and an invalid one it would not serve either', async () => {
    using p = tempProject();
    // Front matter the YAML parser takes but the extension's YAML subset does not: tack calls those invalid too.
    const extra = [
      skill(p.dir, 'anchored', {
        'SKILL.md': '---\nname: anchored\ndescription: &d Anchored. Use when x.\n---\n',
      }),
      skill(p.dir, 'tagged', {
        'SKILL.md': '---\nname: tagged\ndescription: !!str Tagged. Use when x.\n---\n',
      }),
      skill(p.dir, 'emoji', {
        'SKILL.md': `---\nname: emoji\ndescription: "${'😀'.repeat(1024)}"\n---\n`,
      }),
      skill(p.dir, 'empty-compat', {
        'SKILL.md': '---\nname: empty-compat\ndescription: Use when x.\ncompatibility: ""\n---\n',
      }),
    ];
    const disagree: string[] = [];
    for (const dir of [...ALL, ...extra]) {
      const source = await readSkill(dir);
      const ours = (await skillVerdict(source)).valid;
      const sdk = await skillEntry(dir.split('/').at(-1)!, {
        'SKILL.md': readFileSync(join(dir, 'SKILL.md')),
      }).then(
        () => true,
        (error: unknown) => {
          if (SkillCatalogError.isInstance(error)) return false;
          throw error;
        },
      );
      // tack may be stricter (a name's folder, a whitespace-only description), never laxer.
      if (ours && !sdk) disagree.push(relative(REPO, dir));
    }
    expect(disagree).toEqual([]);
    const verdicts = await Promise.all(
      extra.map(async (dir) => (await skillVerdict(await readSkill(dir))).valid),
    );
    // An emoji is one character: 1,024 of them is within the limit.
    expect(verdicts).toEqual([false, false, true, false]);
  });
});
