import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startConsole } from '../../src/console/server.js';
import { tack } from '../helpers/cli.js';
import { fixtureEntry, REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';
import { sessionStart } from '../helpers/session-start.js';

const scope = testScope();
const TOOL_RULES = ['missing-tool', 'unknown-argument', 'tool-changed'];
const ANTHROPIC = resolve(REPO, '..', 'shared', 'data', 'skills', 'anthropics');
const REPORTED = join(REPO, 'test', 'fixtures', 'skills', 'reported');

interface Issue {
  rule: string;
  file: string;
  line: number;
  message: string;
}

function skill(root: string, name: string, body: string, files: Record<string, string> = {}): void {
  mkdirSync(join(root, name), { recursive: true });
  writeFileSync(
    join(root, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Triage the pull requests of a repository. Use when asked to triage.\n---\n${body}\n`,
  );
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, name, file, '..'), { recursive: true });
    writeFileSync(join(root, name, file), text);
  }
}

/** A project with the versioned pull-request server as `gh` and two skills: one names its tools, one none. */
function project(): { p: TempProject; version: (v: string) => void; skills: string } {
  const p = scope.project('tack-skill-tools-');
  const versionFile = join(p.dir, 'server-version');
  const skills = join(p.dir, 'team-skills');
  skill(
    skills,
    'triage',
    [
      '# Triage',
      '',
      'List what is waiting: call mcp__gh__list_pull_requests with `state: open`.',
      'For each linked issue, `mcp__gh__get_issue` with `number` and `repo`.',
      'Then leave a note as [the comment guide](references/comments.md) says.',
    ].join('\n'),
    {
      'references/comments.md': [
        '# Comments',
        '',
        'Post with mcp__gh__add_comment:',
        '',
        '```json',
        '{ "repo": "acme/web", "number": 12, "body": "Triaged." }',
        '```',
      ].join('\n'),
    },
  );
  skill(skills, 'plain', 'Read the pull request and summarise it in three lines.');
  // The server's own tool name next to the server's name.
  skill(
    skills,
    'review',
    "Find the changes with the `gh` server's `list_pull_requests` tool with `state: open`.",
  );
  p.write('tack.json', {
    mcpServers: { gh: fixtureEntry('versioned-server.js', ['--version-file', versionFile]) },
    skills: [skills],
  });
  return { p, version: (v) => writeFileSync(versionFile, v), skills };
}

async function validate(p: TempProject, paths: string[] = []): Promise<Issue[]> {
  const run = await tack(['skills', 'validate', '--servers', '--json', ...paths], { cwd: p.dir, env: p.env });
  expect(run.code, run.stderr).toBe(0);
  const issues = (JSON.parse(run.stdout) as { issues: Issue[] }).issues;
  return issues.filter((i) => TOOL_RULES.includes(i.rule));
}

describe('skills checked against the tools they name, through the binary', () => {
  it('reports a renamed tool and a renamed parameter, and nothing for what did not change', async () => {
    const { p, version, skills } = project();
    const provider = await scope.fake([]);
    version('1');
    expect(await validate(p)).toEqual([]);
    // The session start pins the skills, and with them the schemas of the tools they name.
    expect((await sessionStart(p, provider.url)).filter((n) => n.startsWith('skill '))).toEqual([]);

    version('2');
    const all = await validate(p);
    const file = join(skills, 'triage', 'SKILL.md');
    const issues = all.filter((i) => i.file === file);
    expect(all.filter((i) => i.file !== file).map((i) => [i.file, i.line, i.message])).toEqual([
      [
        join(skills, 'review', 'SKILL.md'),
        5,
        "Tool mcp__gh__list_pull_requests has no argument 'state'; the closest is 'status'",
      ],
      [
        join(skills, 'review', 'SKILL.md'),
        5,
        "Tool mcp__gh__list_pull_requests's input schema changed since the skill was pinned: parameter 'state' renamed to 'status'",
      ],
    ]);
    expect(issues).toEqual([
      {
        severity: 'warning',
        rule: 'unknown-argument',
        file,
        line: 7,
        message: "Tool mcp__gh__list_pull_requests has no argument 'state'; the closest is 'status'",
      },
      {
        severity: 'warning',
        rule: 'tool-changed',
        file,
        line: 7,
        message:
          "Tool mcp__gh__list_pull_requests's input schema changed since the skill was pinned: parameter 'state' renamed to 'status'",
      },
      {
        severity: 'warning',
        rule: 'missing-tool',
        file,
        line: 8,
        message:
          "Tool mcp__gh__get_issue is not in the catalog: server 'gh' has no tool 'get_issue'; the closest is mcp__gh__fetch_issue",
      },
    ]);
    // The text form names the file and line, as editors link them.
    const text = await tack(['skills', 'validate', '--servers'], { cwd: p.dir, env: p.env });
    expect(text.stdout).toContain(
      'team-skills/triage/SKILL.md:8: warning: Tool mcp__gh__get_issue is not in the catalog',
    );

    // The session start says it in one notice per skill.
    const notices = (await sessionStart(p, provider.url)).filter((n) => n.startsWith('skill triage'));
    expect(notices).toEqual([
      `skill triage names tools the catalog does not match: ${issues[0]!.message} (${file}:7); ` +
        `${issues[1]!.message} (${file}:7); ${issues[2]!.message} (${file}:8); ` +
        '`tack skills validate --servers` lists them',
    ]);

    // The skill edited for the new names is held until accepted (a configured skill); accepted, the session start
    // pins it anew with today's schemas, and no warning is left.
    skill(
      skills,
      'triage',
      'Call mcp__gh__list_pull_requests with `status: open`, then `mcp__gh__fetch_issue` with `number`.',
    );
    expect((await sessionStart(p, provider.url)).join('\n')).toContain('held back: skill triage changed');
    const accept = await tack(['pins', 'accept', 'skill', 'triage'], { cwd: p.dir, env: p.env });
    expect(accept.code, accept.stderr).toBe(0);
    expect((await sessionStart(p, provider.url)).filter((n) => n.startsWith('skill triage'))).toEqual([]);
    expect((await validate(p)).filter((i) => i.file === file)).toEqual([]);
  });

  it("the console's skill page shows the same findings", async () => {
    const { p, version, skills } = project();
    const provider = await scope.fake([]);
    version('1');
    await sessionStart(p, provider.url);
    version('2');
    const running = await startConsole({ config: p.load() });
    scope.defer(() => running.close());
    const auth = { authorization: `Bearer ${running.token}` };
    const page = async (name: string) => {
      const response = await fetch(`${running.origin}/api/skills/${name}`, { headers: auth });
      expect(response.status).toBe(200);
      return ((await response.json()) as { issues: Issue[] }).issues.filter((i) =>
        TOOL_RULES.includes(i.rule),
      );
    };
    const triage = await page('triage');
    expect(triage).toEqual((await validate(p)).filter((i) => i.file.includes(`${sep}triage${sep}`)));
    expect(triage.map((i) => [i.rule, i.file, i.line])).toEqual([
      ['unknown-argument', join(skills, 'triage', 'SKILL.md'), 7],
      ['tool-changed', join(skills, 'triage', 'SKILL.md'), 7],
      ['missing-tool', join(skills, 'triage', 'SKILL.md'), 8],
    ]);
    expect(await page('plain')).toEqual([]);
  });

  it('a server that is not connected is one warning, not one per tool', async () => {
    const { p } = project();
    p.write('tack.json', { skills: [join(p.dir, 'team-skills')] });
    const issues = await validate(p);
    expect(issues.map((i) => i.message)).toEqual([
      "Server 'gh' is not connected (not configured, or it failed to start): mcp__gh__list_pull_requests, mcp__gh__get_issue, mcp__gh__add_comment cannot be checked",
    ]);
  });

  it("gives no tool warning for Anthropic's published skills", async () => {
    const { p, version } = project();
    version('2');
    const paths = [REPORTED, ...(existsSync(ANTHROPIC) ? [ANTHROPIC] : [])];
    const run = await tack(['skills', 'validate', '--servers', '--json', ...paths], {
      cwd: p.dir,
      env: p.env,
    });
    const parsed = JSON.parse(run.stdout) as { skills: string[]; issues: Issue[] };
    expect(parsed.skills.length).toBeGreaterThanOrEqual(existsSync(ANTHROPIC) ? 12 : 4);
    expect(parsed.issues.filter((i) => TOOL_RULES.includes(i.rule))).toEqual([]);
  });
});
