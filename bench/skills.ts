import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillLibrary } from '../src/skills/library.js';
import { collectGarbage, isMain, log, median, p50p99, repoRoot, round, tempDir } from './util.js';

/**
 * Agent Skills at scale: `skills` generated skill folders (SKILL.md with front matter and a ~300-line body, a
 * reference file, a script). Cold: each run is a fresh process (bench/fixtures/skills-cold.ts) that discovers
 * them (front matter only) and renders the tier-1 index; side by side, a naive loader that reads every
 * SKILL.md whole. Then, in this process, activation (tier 2) and file reads (tier 3) of random skills.
 */
export async function runSkills(options: { skills?: number; runs?: number; activations?: number } = {}) {
  const count = options.skills ?? 10_000;
  const runs = options.runs ?? 5;
  const activations = options.activations ?? 1000;
  const tmp = tempDir('skills');
  try {
    log(`skills: writing ${count} skills`);
    const body = Array.from(
      { length: 300 },
      (_, i) => `${i + 1}. Check the inputs, run the step, and record what changed in the log.`,
    ).join('\n');
    for (let i = 0; i < count; i++) {
      const name = `skill-${String(i).padStart(5, '0')}`;
      const dir = join(tmp.dir, name);
      mkdirSync(join(dir, 'references'), { recursive: true });
      mkdirSync(join(dir, 'scripts'));
      writeFileSync(
        join(dir, 'SKILL.md'),
        `---\nname: ${name}\ndescription: Handles task number ${i} of the generated set, with its checks and its log. Use when the user asks for task ${i}.\nlicense: MIT\n---\n# Task ${i}\n\nRead [the guide](references/GUIDE.md).\n\n${body}\n`,
      );
      writeFileSync(join(dir, 'references', 'GUIDE.md'), `# Guide ${i}\n\n${body}\n`);
      writeFileSync(join(dir, 'scripts', 'run.sh'), `#!/usr/bin/env bash\necho ${i}\n`);
    }

    const cold = (mode: string[]) =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [join(repoRoot, 'dist/bench/fixtures/skills-cold.js'), tmp.dir, ...mode],
          {
            encoding: 'utf8',
            maxBuffer: 16 * 2 ** 20,
          },
        ),
      ) as Record<string, number>;
    const tackRuns: Array<Record<string, number>> = [];
    const naiveRuns: Array<Record<string, number>> = [];
    for (let run = 0; run < runs; run++) {
      log(`skills: cold run ${run + 1}/${runs}`);
      tackRuns.push(cold([]));
      naiveRuns.push(cold(['--naive']));
    }
    const med = (rows: Array<Record<string, number>>, key: string) => round(median(rows.map((r) => r[key]!)));

    collectGarbage();
    const library = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [tmp.dir] });
    const names = library.skills.map((s) => s.name);
    const activate: number[] = [];
    const read: number[] = [];
    for (let i = 0; i < activations; i++) {
      const name = names[(i * 7919) % names.length]!;
      let t = performance.now();
      await library.activate(name, new Set());
      activate.push(performance.now() - t);
      t = performance.now();
      await library.readFile(name, 'references/GUIDE.md');
      read.push(performance.now() - t);
    }
    activate.sort((a, b) => a - b);
    read.sort((a, b) => a - b);
    const discoverMs = med(tackRuns, 'discoverMs');
    const indexMs = med(tackRuns, 'indexMs');
    return {
      description: `${count} generated skills (SKILL.md of ~300 lines, a reference, a script) in one folder; cold = a fresh process per run, median of ${runs}; the page cache is warm (the files were just written)`,
      skills: count,
      cold: {
        tack: {
          discoverMs,
          indexMs,
          discoverPlusIndexMs: round(discoverMs + indexMs),
          tokenizerLoadMs: med(tackRuns, 'tokenizerLoadMs'),
          rssMB: med(tackRuns, 'rssMB'),
          rssAtStartMB: med(tackRuns, 'rssStartMB'),
          rssAfterTokenizerMB: med(tackRuns, 'rssTokenizerMB'),
          indexTokens: tackRuns[0]!.indexTokens,
          indexed: tackRuns[0]!.indexed,
          dropped: tackRuns[0]!.dropped,
        },
        naiveWholeFiles: {
          discoverMs: med(naiveRuns, 'discoverMs'),
          rssMB: med(naiveRuns, 'rssMB'),
        },
      },
      activation: {
        count: activations,
        ...p50p99(activate, 2),
      },
      readFile: p50p99(read, 2),
    };
  } finally {
    tmp.remove();
  }
}

if (isMain(import.meta.url)) process.stdout.write(`${JSON.stringify(await runSkills(), null, 2)}\n`);
