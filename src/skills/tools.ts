import { TackError } from '../errors.js';
import { type NativeTool, type NativeToolResult, stringArg } from '../tools/native.js';
import type { SkillLibrary } from './library.js';
import { type ApproveScript, formatScriptResult, runSkillScript } from './scripts.js';

export interface SkillToolsOptions {
  /** The session's active skills; a skill in it is not loaded twice. Default: a new set per call of skillTools. */
  active?: Set<string>;
  /** Asked before every script run; without it run_skill_script refuses. */
  approve?: ApproveScript;
  scriptTimeoutMs?: number;
}

export const ACTIVATE_SKILL = 'activate_skill';
export const READ_SKILL_FILE = 'read_skill_file';
export const RUN_SKILL_SCRIPT = 'run_skill_script';

/**
 * Tiers 2 and 3 as native tools for the harness: activate_skill, read_skill_file and run_skill_script. Tier 1
 * (the index the model chooses from) is `library.renderIndex()`, assembled into the system prompt.
 */
export function skillTools(library: SkillLibrary, options: SkillToolsOptions = {}): NativeTool[] {
  const active = options.active ?? new Set<string>();
  const names = library.skills.map((s) => s.name);
  return [
    {
      name: ACTIVATE_SKILL,
      description:
        'Load the full instructions of a skill from <available_skills> when the task matches its description. ' +
        'Returns its SKILL.md body and the list of its files.',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', enum: names, description: 'The skill name' } },
        required: ['name'],
        additionalProperties: false,
      },
      execute: (input) =>
        guard(async () => (await library.activate(stringArg(ACTIVATE_SKILL, input, 'name'), active)).text),
    },
    {
      name: READ_SKILL_FILE,
      description:
        "Read a file of a skill (a reference, a template, a script's source) by its path inside the skill folder.",
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The skill name' },
          path: { type: 'string', description: 'Relative to the skill folder, e.g. references/FORMS.md' },
        },
        required: ['name', 'path'],
        additionalProperties: false,
      },
      execute: (input) =>
        guard(async () => {
          const file = await library.readFile(
            stringArg(READ_SKILL_FILE, input, 'name'),
            stringArg(READ_SKILL_FILE, input, 'path'),
          );
          return file.text;
        }),
    },
    {
      name: RUN_SKILL_SCRIPT,
      description:
        "Run a script from a skill's scripts/ folder, in the skill folder, and get its output. The user approves " +
        'each run.',
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The skill name' },
          script: { type: 'string', description: 'Path inside scripts/, e.g. extract.py' },
          args: { type: 'array', items: { type: 'string' }, description: 'Arguments (no shell is involved)' },
        },
        required: ['name', 'script'],
        additionalProperties: false,
      },
      execute: (input, context) =>
        guard(async () => {
          const name = stringArg(RUN_SKILL_SCRIPT, input, 'name');
          const script = stringArg(RUN_SKILL_SCRIPT, input, 'script');
          const args = input.args ?? [];
          if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) {
            throw new TypeError(`${RUN_SKILL_SCRIPT}: "args" must be an array of strings`);
          }
          const result = await runSkillScript(library.require(name), script, args as string[], {
            approve: options.approve,
            timeoutMs: options.scriptTimeoutMs,
            signal: context?.signal,
          });
          return { text: formatScriptResult(script, result), isError: result.exitCode !== 0 };
        }),
    },
  ];
}

/** Errors the model caused (unknown skill, bad path, refused run) go back to it as text it can act on. */
async function guard(run: () => Promise<string | NativeToolResult>): Promise<NativeToolResult> {
  try {
    const result = await run();
    return typeof result === 'string' ? { text: result } : result;
  } catch (error) {
    if (error instanceof TackError) {
      return { text: `${error.message}${error.hint ? `\n${error.hint}` : ''}`, isError: true };
    }
    if (error instanceof TypeError) return { text: error.message, isError: true };
    throw error;
  }
}
