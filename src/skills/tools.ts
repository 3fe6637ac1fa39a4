import type { SandboxPolicy } from '../config/sandbox.js';
import {
  type NativeTool,
  type NativeToolTraits,
  ToolInputError,
  nativeTool as tool,
} from '../tools/native.js';
import type { SkillLibrary } from './library.js';
import { type ApproveScript, formatScriptResult, runSkillScript } from './scripts.js';

/** Who approves scripts, the session's active skills, and the scripts' sandbox and timeout. */
export interface SkillToolsOptions {
  /** The session's active skills; a skill in it is not loaded twice. Default: a new set per call of skillTools. */
  active?: Set<string>;
  /** Asked before every script run; without it run_skill_script refuses. */
  approve?: ApproveScript;
  scriptTimeoutMs?: number;
  /** The sandbox scripts run in (tack.json `sandbox.skillScripts`, resolved); absent: none. */
  sandbox?: SandboxPolicy | undefined;
}

export const ACTIVATE_SKILL = 'activate_skill';
export const READ_SKILL_FILE = 'read_skill_file';
export const RUN_SKILL_SCRIPT = 'run_skill_script';

/**
 * A script can do anything its user can: send data out, change or delete things. It asks every time, with the
 * exact command line, and runs in the skill-script sandbox (an enforced one without network rules egress out).
 */
const SCRIPT_TRAITS: NativeToolTraits = {
  capabilities: (['egress', 'destructive'] as const).map((capability) => ({
    capability,
    why: 'runs code on this machine',
  })),
  alwaysAsk: true,
  sandbox: 'skillScripts',
};

// No `enum` of skill names: the index already lists them, and an enum of thousands would cost more tokens every
// turn than the index's whole budget.
const NAME = { type: 'string', description: 'The skill name, as in <available_skills>' };

/**
 * Tiers 2 and 3 as native tools for the harness: activate_skill, read_skill_file and run_skill_script. Tier 1
 * (the index the model chooses from) is `library.renderIndex()`, assembled into the system prompt.
 */
export function skillTools(library: SkillLibrary, options: SkillToolsOptions = {}): NativeTool[] {
  const active = options.active ?? new Set<string>();
  return [
    tool(
      ACTIVATE_SKILL,
      'Load the full instructions of a skill from <available_skills> when the task matches its description. ' +
        'Returns its SKILL.md body and the list of its files.',
      { name: NAME },
      ['name'],
      async (arg) => (await library.activate(arg('name'), active)).text,
    ),
    tool(
      READ_SKILL_FILE,
      "Read a file of a skill (a reference, a template, a script's source) by its path inside the skill folder.",
      {
        name: NAME,
        path: { type: 'string', description: 'Relative to the skill folder, e.g. references/FORMS.md' },
      },
      ['name', 'path'],
      async (arg) => (await library.readFile(arg('name'), arg('path'))).text,
    ),
    tool(
      RUN_SKILL_SCRIPT,
      "Run a script from a skill's scripts/ folder, in the skill folder, and get its output. The user approves " +
        'each run.',
      {
        name: NAME,
        script: { type: 'string', description: 'Path inside scripts/, e.g. extract.py' },
        args: { type: 'array', items: { type: 'string' }, description: 'Arguments (no shell is involved)' },
      },
      ['name', 'script'],
      async (arg, input, signal) => {
        const skill = library.require(arg('name'));
        const script = arg('script');
        const args = input.args ?? [];
        if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) {
          throw new ToolInputError(`${RUN_SKILL_SCRIPT}: "args" must be an array of strings`);
        }
        const result = await runSkillScript(skill, script, args as string[], {
          approve: options.approve,
          timeoutMs: options.scriptTimeoutMs,
          signal,
          sandbox: options.sandbox,
        });
        return { text: formatScriptResult(script, result), isError: result.exitCode !== 0 };
      },
      SCRIPT_TRAITS,
    ),
  ];
}
