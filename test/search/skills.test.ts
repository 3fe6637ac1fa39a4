import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/agent.js';
import { tack } from '../helpers/cli.js';
import { providerEnv, toolResults } from '../helpers/fake-provider.js';
import type { TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const COUNT = 150;
const TOPICS = [
  'invoice',
  'kubernetes',
  'poetry',
  'sourdough',
  'chess',
  'tax',
  'drone',
  'orchid',
  'violin',
  'glacier',
];

/**
 * A project with many skills in a `skills` folder of tack.json: skill-000 ... skill-149, each about one topic and
 * one number, so a search can tell them apart; the last ones are past any small index budget.
 */
function manySkills(): TempProject {
  const p = scope.project('tack-skill-search-');
  const root = join(p.dir, 'skills');
  for (let i = 0; i < COUNT; i++) {
    const name = `skill-${String(i).padStart(3, '0')}`;
    mkdirSync(join(root, name), { recursive: true });
    const topic = TOPICS[i % TOPICS.length]!;
    writeFileSync(
      join(root, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Handles ${topic} work, case ${i}. Use when the task is about ${topic} number ${i}.\n---\n\n# ${name}\n\nSteps for ${topic} case ${i}.\n`,
    );
  }
  // A skill no other resembles, last in the list: always over the budget.
  mkdirSync(join(root, 'zz-aurora'), { recursive: true });
  writeFileSync(
    join(root, 'zz-aurora', 'SKILL.md'),
    '---\nname: zz-aurora\ndescription: Predicts northern lights visibility from magnetometer readings. Use for aurora forecasts.\n---\n\nRead the Kp index first.\n',
  );
  p.write('tack.json', { skills: ['skills'], mcpServers: {} });
  return p;
}

describe('skills past the tier-1 budget stay reachable', () => {
  it('tack skills index reports the budget in one line, and tack skills search finds a skill it left out', async () => {
    const p = manySkills();
    const index = await tack(['skills', 'index', '--budget', '400'], { cwd: p.dir, env: p.env });
    expect(index.code).toBe(0);
    const lines = index.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^warning: \\d+ of ${COUNT + 1} skills in the index \\(budget 400 tokens\\); (?:\\d+ descriptions shortened to fit; )?\\d+ left out of the index, reachable with search_skills`,
      ),
    );
    expect(index.stderr).not.toContain('zz-aurora');
    expect(index.stdout).not.toContain('zz-aurora');

    const search = await tack(['skills', 'search', 'northern lights forecast', '--json'], {
      cwd: p.dir,
      env: p.env,
    });
    expect(search.code).toBe(0);
    expect((JSON.parse(search.stdout) as Array<{ name: string }>)[0]!.name).toBe('zz-aurora');
  });

  it('a session gets search_skills and a note when skills were left out, and can activate one it found', async () => {
    const p = manySkills();
    const provider = await scope.fake([
      { toolCalls: [{ name: 'search_skills', input: { queries: ['aurora visibility'], k: 2 } }] },
      { toolCalls: [{ name: 'activate_skill', input: { name: 'zz-aurora' } }] },
      { text: 'Kp first.' },
    ]);
    const agent = await startAgent({
      config: p.load(),
      model: 'anthropic:claude-sonnet-4-5',
      env: { ...p.env, ...providerEnv(provider) },
      cwd: p.dir,
      transcript: false,
      // 1 % of 20,000 tokens: an index of a few dozen skills at most.
      session: { context: { window: 20_000 } },
    });
    scope.defer(() => agent.close());
    expect((await agent.session.run('Will I see the aurora tonight?')).reason).toBe('completed');
    const first = provider.requests[0]!;
    expect(first.tools.map((t) => t.name)).toContain('search_skills');
    expect(first.system).toMatch(new RegExp(`\\d+ of ${COUNT + 1} installed skills are not listed above`));
    expect(first.system).not.toContain('zz-aurora');
    expect(toolResults(provider.requests[1]!).at(-1)!.content).toMatch(
      /\n1\. zz-aurora \(config\): Predicts/,
    );
    expect(toolResults(provider.requests[2]!).at(-1)!.content).toContain('Read the Kp index first.');
  });

  it('a session whose skills all fit gets neither', async () => {
    const p = scope.project('tack-skill-search-');
    mkdirSync(join(p.dir, 'skills', 'only-one'), { recursive: true });
    writeFileSync(
      join(p.dir, 'skills', 'only-one', 'SKILL.md'),
      '---\nname: only-one\ndescription: The one skill. Use always.\n---\n\nBody.\n',
    );
    p.write('tack.json', { skills: ['skills'], mcpServers: {} });
    const provider = await scope.fake([{ text: 'ok' }]);
    const agent = await startAgent({
      config: p.load(),
      model: 'anthropic:claude-sonnet-4-5',
      env: { ...p.env, ...providerEnv(provider) },
      cwd: p.dir,
      transcript: false,
    });
    scope.defer(() => agent.close());
    await agent.session.run('hi');
    expect(provider.requests[0]!.tools.map((t) => t.name)).not.toContain('search_skills');
    expect(provider.requests[0]!.system).not.toContain('not listed above');
  });
});
