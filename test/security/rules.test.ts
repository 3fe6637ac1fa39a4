import { describe, expect, it } from 'vitest';
import { ApprovalGate } from '../../src/agent/approval.js';
import { loadConfig } from '../../src/config/load.js';
import { RuleSet, ruleProblem } from '../../src/security/rules.js';
import { tempProject } from '../helpers/project.js';

describe('permission rules', () => {
  it('match tool names and argument globs, deny before ask before allow', () => {
    const rules = new RuleSet({
      allow: ['mcp__fs__*', 'mcp__github__list_issues', 'skill_script(release-notes/*)'],
      ask: ['mcp__fs__write_file(path:/tmp/**)'],
      deny: ['mcp__fs__write_file(path:/etc/*)', 'mcp__fs__delete_*'],
    });
    expect(rules.match('mcp__fs__read_file', { path: '/x' })).toEqual({
      action: 'allow',
      rule: 'mcp__fs__*',
    });
    expect(rules.match('mcp__fs__write_file', { path: '/etc/passwd' })?.action).toBe('deny');
    // `*` stays within a segment, `**` crosses them.
    expect(rules.match('mcp__fs__write_file', { path: '/etc/ssh/sshd_config' })?.action).toBe('allow');
    expect(rules.match('mcp__fs__write_file', { path: '/tmp/a/b/c.txt' })?.action).toBe('ask');
    expect(rules.match('mcp__fs__delete_file', {})?.action).toBe('deny');
    expect(rules.match('mcp__github__list_issues', {})?.action).toBe('allow');
    expect(rules.match('mcp__github__create_issue', {})).toBeUndefined();
    expect(rules.match('run_skill_script', { name: 'release-notes', script: 'collect.sh' })?.action).toBe(
      'allow',
    );
    expect(rules.match('run_skill_script', { name: 'other', script: 'collect.sh' })).toBeUndefined();
    // An argument that is not a string does not satisfy a glob.
    expect(rules.match('mcp__fs__write_file', { path: 42 })?.action).toBe('allow');
  });

  it('refuse an allow rule that does not name its server, and malformed patterns', () => {
    expect(ruleProblem('mcp__*__read_file', 'allow')).toMatch(/too broad/);
    expect(ruleProblem('mcp__*', 'allow')).toMatch(/too broad/);
    expect(ruleProblem('*', 'allow')).toMatch(/too broad/);
    expect(ruleProblem('mcp__*__delete_*', 'deny')).toBeUndefined();
    expect(ruleProblem('mcp__fs__write_file(path:/tmp/**', 'ask')).toMatch(/must close/);
    expect(ruleProblem('mcp__fs__write_file(/tmp)', 'ask')).toMatch(/name:glob/);
    expect(ruleProblem('rm -rf', 'deny')).toMatch(/tool name pattern/);
  });

  it('are read from tack.json, a bad one named by file and field', () => {
    using project = tempProject();
    project.write('tack.json', { permissions: { allow: ['mcp__notes__*'], deny: ['mcp__notes__add_note'] } });
    expect(project.load().permissions).toEqual({
      allow: ['mcp__notes__*'],
      ask: [],
      deny: ['mcp__notes__add_note'],
    });
    project.write('tack.json', { permissions: { allow: ['mcp__*__search'] } });
    expect(() => loadConfig({ cwd: project.dir, env: project.env })).toThrow(
      /tack\.json: permissions\.allow\[0\]: "mcp__\*__search": too broad/,
    );
  });

  it('decide before the default policy in the approval gate', async () => {
    const events: string[] = [];
    const asked: string[] = [];
    const gate = new ApprovalGate({
      mode: 'ask',
      approver: async (r) => {
        asked.push(`${r.tool}: ${r.why}`);
        return { decision: 'allow' };
      },
      emit: (e) => events.push(e.type === 'approval' ? `${e.decision} ${e.by} ${e.reason}` : e.type),
      rules: new RuleSet({
        allow: ['mcp__notes__search_notes'],
        ask: ['mcp__wx__get_forecast'],
        deny: ['mcp__notes__add_note'],
      }),
    });
    const tool = (name: string, server: string, trusted: boolean) => ({
      name,
      server,
      description: '',
      readOnlyHint: true,
      trustedServer: trusted,
      native: false,
    });
    expect((await gate.decide(tool('mcp__notes__add_note', 'notes', true), 'c1', {})).allowed).toBe(false);
    expect((await gate.decide(tool('mcp__notes__search_notes', 'notes', false), 'c2', {})).allowed).toBe(
      true,
    );
    expect((await gate.decide(tool('mcp__wx__get_forecast', 'wx', true), 'c3', {})).allowed).toBe(true);
    expect(asked).toEqual(['mcp__wx__get_forecast: the rule mcp__wx__get_forecast says to ask']);
    expect(events).toEqual([
      'deny policy denied by the rule mcp__notes__add_note',
      'allow policy allowed by the rule mcp__notes__search_notes',
      'allow user approved once',
    ]);
  });
});
