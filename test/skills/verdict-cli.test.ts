import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { BIN, tack } from '../helpers/cli.js';
import { REPO, tempProject } from '../helpers/project.js';

const REPORTED = join(REPO, 'test', 'fixtures', 'skills', 'reported');
const VALID = ['docx', 'pdf', 'pptx'];
const INVALID = ['claude-api'];
const REASON = 'Description exceeds 1024 character limit (1068 chars)';

/** The user's config lists the reported cases (issue 29, point 9): three valid skills and claude-api. */
function project() {
  const p = tempProject();
  mkdirSync(p.home, { recursive: true });
  writeFileSync(join(p.home, 'config.json'), JSON.stringify({ skills: [REPORTED] }));
  return p;
}

/** An MCP client of the SDK on `tack <args>` over stdio, with the server's stderr collected. */
async function connect(args: string[], p: ReturnType<typeof project>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    cwd: p.dir,
    env: p.env as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'verdict-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe('one verdict for a skill, through the binary', () => {
  it('skills validate, skills list, serve-skills and tack serve agree on the same skills and verdicts', async () => {
    using p = project();
    const validate = await tack(['skills', 'validate', '--json'], { cwd: p.dir, env: p.env });
    expect(validate.code).toBe(1); // claude-api's error
    const validated = JSON.parse(validate.stdout) as {
      verdicts: Array<{ name: string; valid: boolean; errors: number; warnings: number }>;
      issues: Array<{ severity: string; message: string; file: string }>;
    };
    const byVerdict = (rows: Array<{ name: string; valid: boolean }>, valid: boolean) =>
      rows
        .filter((r) => r.valid === valid)
        .map((r) => r.name)
        .sort();
    expect(byVerdict(validated.verdicts, true)).toEqual(VALID);
    expect(byVerdict(validated.verdicts, false)).toEqual(INVALID);
    expect(validated.issues.filter((i) => i.severity === 'error').map((i) => i.message)).toEqual([REASON]);

    const list = await tack(['skills', 'list', '--json'], { cwd: p.dir, env: p.env });
    expect(list.code).toBe(0);
    const listed = (
      JSON.parse(list.stdout) as {
        skills: Array<{ name: string; valid: boolean; reasons: string[]; errors: number; warnings: number }>;
      }
    ).skills;
    expect(byVerdict(listed, true)).toEqual(VALID);
    expect(byVerdict(listed, false)).toEqual(INVALID);
    expect(listed.find((s) => s.name === 'claude-api')!.reasons).toEqual([REASON]);
    // The same findings per skill as validate's.
    for (const row of listed) {
      const verdict = validated.verdicts.find((v) => v.name === row.name)!;
      expect([row.name, row.errors, row.warnings]).toEqual([verdict.name, verdict.errors, verdict.warnings]);
    }
    expect(list.stderr).toContain(`skill 'claude-api' is invalid and not offered: ${REASON}`);

    // serve-skills: the Skills extension and the tools serve the valid ones, and say which one is not served.
    const skills = await connect(['serve-skills'], p);
    try {
      const { skills: entries } = await new SkillsClient(skills.client).list();
      expect(entries.map((e) => e.frontmatter.name).sort()).toEqual(VALID);
      expect(skills.client.getInstructions()).toMatch(/^3 Agent Skills\./);
      const refused = await skills.client.callTool({
        name: 'activate_skill',
        arguments: { name: 'claude-api' },
      });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('is invalid and not offered');
      expect(skills.stderr()).toContain(
        `tack serve-skills: 3 skills (1 invalid skill not served: claude-api)`,
      );
      expect(skills.stderr()).toContain(`skill 'claude-api' is invalid and not offered: ${REASON}`);
    } finally {
      await skills.client.close();
    }

    // tack serve: the same three through the gateway, and the count it prints is what it serves.
    const gateway = await connect(['serve'], p);
    try {
      const { skills: entries } = await new SkillsClient(gateway.client).list();
      expect(entries.map((e) => e.frontmatter.name).sort()).toEqual(VALID);
      expect(gateway.client.getInstructions()).toContain("tack's own 3 Agent Skills");
      expect(gateway.stderr()).toMatch(/, 3 skills \(1 invalid skill not served: claude-api\) on stdio/);
    } finally {
      await gateway.client.close();
    }
  }, 90_000);
});
