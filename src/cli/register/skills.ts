import type { Command } from 'commander';
import type { SkillsOptions } from '../commands/skills.js';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, positive } from './options.js';

const skillsIndexCommand = lazy(() => import('../commands/skills.js'), 'skillsIndexCommand');
const skillsListCommand = lazy(() => import('../commands/skills.js'), 'skillsListCommand');
const skillsRunCommand = lazy(() => import('../commands/skills.js'), 'skillsRunCommand');
const skillsSearchCommand = lazy(() => import('../commands/skills.js'), 'skillsSearchCommand');
const skillsShowCommand = lazy(() => import('../commands/skills.js'), 'skillsShowCommand');
const skillsValidateCommand = lazy(() => import('../commands/skills.js'), 'skillsValidateCommand');

function skillOptions(cmd: Command): SkillsOptions {
  const raw = cmd.optsWithGlobals<Record<string, unknown>>();
  return {
    ...optionsOf(cmd),
    servers: raw.servers === true,
    contextWindow: positive('context-window', raw.contextWindow),
    budget: positive('budget', raw.budget),
  };
}

const withServers = (cmd: Command) =>
  cmd.option('--servers', 'also the skills of the configured MCP servers (connects to them)');

const withBudget = (cmd: Command) =>
  cmd
    .option(
      '--context-window <tokens>',
      "the model's context window; the index gets 1% of it (default 200000)",
    )
    .option('--budget <tokens>', 'the index budget in tokens (overrides --context-window)');

interface RunOptions {
  yes?: boolean;
  timeout?: string;
}

/** `tack skills list|index|search|show|validate|run`: Agent Skills, the three tiers the model gets them in. */
export const registerSkills: Register = (program, { setExitCode }) => {
  const skills = program
    .command('skills')
    .description('Agent Skills: list, index, show, validate and run (project skills wait for `tack trust`)');
  withBudget(
    withServers(
      // `tack skills` alone lists them, as `tack servers` and `tack tools` list theirs (it printed help, exit 2).
      skills
        .command('list', { isDefault: true })
        .description('every skill with its scope and token cost: index, body, files (the default)'),
    ),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await skillsListCommand(skillOptions(cmd))));
  withBudget(
    withServers(skills.command('index').description('tier 1: the skills index exactly as the model gets it')),
  ).action(async (_opts: unknown, cmd: Command) => setExitCode(await skillsIndexCommand(skillOptions(cmd))));
  withServers(
    skills
      .command('search')
      .description('rank every installed skill (those left out of the index too) for one or more queries')
      .argument('<query...>', 'one argument per query')
      .option('-k <n>', 'how many (default 10)'),
  ).action(async (queries: string[], opts: { k?: string }, cmd: Command) =>
    setExitCode(
      await skillsSearchCommand(queries, {
        ...skillOptions(cmd),
        ...(opts.k ? { k: positive('k', opts.k) ?? 10 } : {}),
      }),
    ),
  );
  withServers(
    skills
      .command('show')
      .description('tier 2: what activate_skill returns for a skill')
      .argument('<name>', 'skill name'),
  ).action(async (name: string, _opts: unknown, cmd: Command) =>
    setExitCode(await skillsShowCommand(name, skillOptions(cmd))),
  );
  skills
    .command('validate')
    .description("check skills against the Agent Skills spec and tack's warnings (exit 1 on errors)")
    .argument('[path...]', 'skill folders, SKILL.md files or folders of skills (default: every skill found)')
    .option('--strict', 'unknown front matter fields are errors')
    .option(
      '--servers',
      'also check the tools each skill names against the configured servers (connects to them)',
    )
    .action(async (paths: string[], opts: { strict?: boolean }, cmd: Command) =>
      setExitCode(await skillsValidateCommand(paths, { ...skillOptions(cmd), strict: opts.strict === true })),
    );
  withServers(
    skills
      .command('run')
      .description("tier 3: run a script from a skill's scripts/ folder (asks first)")
      .argument('<name>', 'skill name')
      .argument('<script>', 'path inside scripts/')
      .argument('[args...]', 'arguments for the script')
      .option('--yes', 'approve the run without asking')
      .option('--timeout <ms>', 'kill the script after this long (default 60000)'),
  ).action(async (name: string, script: string, args: string[], opts: RunOptions, cmd: Command) =>
    setExitCode(
      await skillsRunCommand(name, script, args, {
        ...skillOptions(cmd),
        yes: opts.yes === true,
        timeout: positive('timeout', opts.timeout),
      }),
    ),
  );
};
