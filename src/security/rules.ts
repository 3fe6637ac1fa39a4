import { TackError } from '../errors.js';

/**
 * Permission rules, Claude Code-like: `allow`, `ask` and `deny` lists of patterns over model-visible tool names,
 * optionally with argument constraints:
 *
 *   mcp__github__*                       every tool of the github server
 *   mcp__github__create_issue            one tool
 *   mcp__fs__write_file(path:/tmp/**)    one tool, when its `path` argument matches the glob
 *   skill_script(release-notes/*)        run_skill_script, matched against `<skill>/<script>`
 *
 * `*` matches within a name or a path segment, `**` across `/`. Evaluation: deny, then ask, then allow; a call no
 * rule matches gets the default policy. An allow rule must name its server literally: `mcp__*__*` would approve
 * every tool of every server anyone adds later.
 */
export type RuleAction = 'allow' | 'ask' | 'deny';

/** Tool-call patterns by action, as tack.json's `permissions` lists them. */
export interface PermissionRules {
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
}

interface Rule {
  action: RuleAction;
  source: string;
  tool: RegExp;
  /** `undefined`: any arguments. Each entry: the argument's name and the glob its string value must match. */
  args?: Array<{ key: string; value: RegExp }>;
}

/** The rule a call matched and the action it takes. */
export interface RuleMatch {
  action: RuleAction;
  rule: string;
}

/** The tool name `skill_script(...)` rules speak of. */
const SKILL_SCRIPT_TOOL = 'run_skill_script';

/** Why a pattern cannot be a rule, or undefined when it can. */
export function ruleProblem(pattern: string, action: RuleAction): string | undefined {
  const parsed = parse(pattern, action);
  if (typeof parsed === 'string') return parsed;
  return undefined;
}

/** Permission rules, parsed once: `match` gives the rule a call falls under (deny before ask before allow). */
export class RuleSet {
  readonly #rules: Rule[] = [];

  constructor(rules: PermissionRules = {}) {
    for (const action of ['deny', 'ask', 'allow'] as const) {
      for (const pattern of rules[action] ?? []) {
        const parsed = parse(pattern, action);
        if (typeof parsed === 'string')
          throw new TackError('CONFIG_INVALID', `permissions.${action}: "${pattern}": ${parsed}`, {
            hint: 'Fix the rule in tack.json; see docs/security.md for the syntax.',
          });
        this.#rules.push(parsed);
      }
    }
  }

  get size(): number {
    return this.#rules.length;
  }

  /** The first rule that matches, deny before ask before allow; undefined when none does. */
  match(tool: string, args: unknown): RuleMatch | undefined {
    for (const rule of this.#rules) {
      if (!rule.tool.test(tool)) continue;
      if (rule.args && !rule.args.every((a) => matchesArg(tool, args, a))) continue;
      return { action: rule.action, rule: rule.source };
    }
    return undefined;
  }
}

function matchesArg(tool: string, args: unknown, constraint: { key: string; value: RegExp }): boolean {
  const record = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  // skill_script(<skill>/<script>) constrains the pair, as the user names a script.
  const value =
    tool === SKILL_SCRIPT_TOOL && constraint.key === ''
      ? `${String(record.name ?? '')}/${String(record.script ?? '')}`
      : record[constraint.key];
  return typeof value === 'string' && constraint.value.test(value);
}

function parse(pattern: string, action: RuleAction): Rule | string {
  const text = pattern.trim();
  const open = text.indexOf('(');
  const name = open === -1 ? text : text.slice(0, open);
  if (open !== -1 && !text.endsWith(')')) return 'an argument list opens with ( and must close with )';
  const argText = open === -1 ? undefined : text.slice(open + 1, -1).trim();
  if (!/^[A-Za-z0-9_*-]+$/.test(name)) return 'expected a tool name pattern of letters, digits, _, - and *';
  const isSkill = name === 'skill_script';
  const toolName = isSkill ? SKILL_SCRIPT_TOOL : name;
  if (action === 'allow' && !isSkill && toolName.startsWith('mcp__')) {
    const server = toolName.slice(5).split('__')[0] ?? '';
    if (server === '' || server.includes('*'))
      return 'too broad: an allow rule must name its server literally (mcp__<server>__...)';
  }
  if (action === 'allow' && toolName === '*') return 'too broad: an allow rule must name a tool or a server';
  const rule: Rule = { action, source: text, tool: glob(toolName, false) };
  if (argText !== undefined && argText !== '*' && argText !== '') {
    const args: Array<{ key: string; value: RegExp }> = [];
    for (const part of argText.split(',')) {
      const cut = part.indexOf(':');
      if (isSkill && cut === -1) {
        args.push({ key: '', value: glob(part.trim(), true) });
        continue;
      }
      if (cut <= 0) return `argument constraint "${part.trim()}" must be name:glob`;
      args.push({ key: part.slice(0, cut).trim(), value: glob(part.slice(cut + 1).trim(), true) });
    }
    rule.args = args;
  }
  return rule;
}

/** `*` within a segment (or a name), `**` across `/`; everything else literal. */
function glob(pattern: string, paths: boolean): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      out += '.*';
      i++;
    } else if (c === '*') out += paths ? '[^/]*' : '.*';
    else out += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}
