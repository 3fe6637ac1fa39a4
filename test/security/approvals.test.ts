import { chmodSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalGate, type ApprovalRequest } from '../../src/agent/approval.js';
import { loadConfig } from '../../src/config/load.js';
import { addPermissionRule } from '../../src/config/user-rules.js';
import { RuleSet } from '../../src/security/rules.js';
import { type TempProject, tempProject } from '../helpers/project.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function project(): TempProject {
  const p = tempProject('tack-approvals-');
  cleanups.push(() => p[Symbol.dispose]());
  return p;
}

const tool = {
  name: 'mcp__notes__add_note',
  server: 'notes',
  description: 'Add a note.',
  readOnlyHint: false,
  trustedServer: false,
  native: false,
};

describe('approval answers', () => {
  it('"always" writes an allow rule to the user config, which later sessions obey without asking', async () => {
    const p = project();
    const userFile = p.load().paths.userConfigFile;
    mkdirSync(dirname(userFile), { recursive: true });
    writeFileSync(userFile, JSON.stringify({ mcpServers: {}, agent: { approve: 'ask' } }, null, 2));
    const asked: ApprovalRequest[] = [];
    const gate = new ApprovalGate({
      mode: 'ask',
      approver: async (r) => {
        asked.push(r);
        return { decision: 'allow', remember: 'always' };
      },
      emit: () => {},
      persistRule: (rule) => addPermissionRule(userFile, 'allow', rule),
    });
    const first = await gate.decide(tool, 'c1', { text: 'hi' });
    expect(first).toEqual({
      allowed: true,
      by: 'user',
      reason: 'approved always (mcp__notes__add_note saved to the user config)',
    });
    expect(asked[0]!.alwaysRule).toBe('mcp__notes__add_note');
    expect(asked[0]!.why).toBe('may change something (not read-only)');
    // The rest of the file is kept; the rule is there once.
    const saved = JSON.parse(readFileSync(userFile, 'utf8'));
    expect(saved).toEqual({
      mcpServers: {},
      agent: { approve: 'ask' },
      permissions: { allow: ['mcp__notes__add_note'] },
    });
    expect(addPermissionRule(userFile, 'allow', 'mcp__notes__add_note')).toBe(false);

    // A new session built from the configuration allows it by rule.
    const later = new ApprovalGate({
      mode: 'never',
      emit: () => {},
      rules: new RuleSet(loadConfig({ cwd: p.dir, env: p.env }).permissions),
    });
    expect(await later.decide(tool, 'c2', {})).toEqual({
      allowed: true,
      by: 'policy',
      reason: 'allowed by the rule mcp__notes__add_note',
    });
  });

  it('"session" remembers for this gate only; skill scripts are never offered "always"', async () => {
    const answers: ApprovalRequest[] = [];
    const gate = new ApprovalGate({
      mode: 'ask',
      approver: async (r) => {
        answers.push(r);
        return { decision: 'allow', remember: 'session' };
      },
      emit: () => {},
      persistRule: () => {
        throw new Error('must not persist');
      },
    });
    await gate.decide(tool, 'c1', {});
    expect((await gate.decide(tool, 'c2', {})).reason).toBe('allowed for this session');
    const script = { ...tool, name: 'run_skill_script', native: true, alwaysAsk: true };
    await gate.decide(script, 'c3', { name: 's', script: 'x.sh' });
    expect(answers.map((a) => a.alwaysRule)).toEqual(['mcp__notes__add_note', undefined]);
  });

  it('writes through a symlinked config, keeps its mode, and reads a BOM', () => {
    const p = project();
    const real = p.write(
      'dotfiles-tack.json',
      '\uFEFF{"mcpServers": {"gh": {"command": "gh", "env": {"GH_TOKEN": "x"}}}}',
    );
    chmodSync(real, 0o600);
    const link = join(p.dir, 'tack.json');
    symlinkSync(real, link);
    expect(addPermissionRule(link, 'allow', 'mcp__gh__list')).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(statSync(real).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(real, 'utf8'))).toEqual({
      mcpServers: { gh: { command: 'gh', env: { GH_TOKEN: 'x' } } },
      permissions: { allow: ['mcp__gh__list'] },
    });
  });

  it('refuses to rewrite a user config that is not JSON, naming the file', () => {
    const p = project();
    const file = p.write('broken.json', '{ "permissions": ');
    expect(() => addPermissionRule(file, 'allow', 'mcp__notes__add_note')).toThrow(
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON`),
    );
    expect(readFileSync(file, 'utf8')).toBe('{ "permissions": ');
    expect(() => addPermissionRule(file, 'allow', 'mcp__*__x')).toThrow(/too broad/);
  });
});
