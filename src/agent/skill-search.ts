import { quoteQueries, searchToolsInput } from '../search/meta-tools.js';
import { ToolSearchIndex } from '../search/tool-index.js';
import type { SkillLibrary } from '../skills/library.js';
import { ACTIVATE_SKILL } from '../skills/tools.js';
import type { NativeTool } from '../tools/native.js';

export const SEARCH_SKILLS = 'search_skills';

/**
 * Skills past the tier-1 budget are not in <available_skills>, but they are installed: `search_skills` finds them
 * with the same ranking as search_tools (a skill is a "tool" of its scope: name split into words, description),
 * and activate_skill loads any of them by name. The index is built on the first search: a session that never
 * needs it never pays for indexing 10,000 skills.
 */
export function skillSearchTool(library: SkillLibrary, left: number): NativeTool {
  let index: ToolSearchIndex | undefined;
  return {
    name: SEARCH_SKILLS,
    description: `Find installed skills that are not listed in <available_skills> (${left} are not). Pass one short query per need in "queries", in the words a skill description would use. Load a found skill with ${ACTIVATE_SKILL}.`,
    inputSchema: {
      type: 'object',
      properties: {
        queries: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 8 },
        query: { type: 'string' },
        k: { type: 'integer', minimum: 1, maximum: 20 },
      },
      additionalProperties: false,
    },
    // It reads the installed skills' names and descriptions: nothing of the user's, nothing sent out.
    capabilities: [],
    async execute(input) {
      const args = searchToolsInput(input);
      if ('error' in args) return { text: args.error.replace('search_tools', SEARCH_SKILLS), isError: true };
      index ??= ToolSearchIndex.build(
        library.skills.map((s) => ({ server: s.scope, name: s.name, description: s.description })),
      );
      const hits = index.searchMany(args.queries, args.k);
      if (hits.length === 0)
        return { text: `No skill matches ${quoteQueries(args.queries)}. Try other words.` };
      const lines = hits.map((h, i) => {
        const line = (h.tool.description ?? '').split('\n')[0]!.trim();
        return `${i + 1}. ${h.tool.name} (${h.tool.server}): ${line.length > 200 ? `${line.slice(0, 199)}…` : line}`;
      });
      return { text: `${lines.join('\n')}\nLoad one with ${ACTIVATE_SKILL}.` };
    },
  };
}

/** The line the skills index ends with when skills were left out: they exist, and how to find them. */
export function skillsLeftOutNote(dropped: number, total: number): string {
  return `${dropped} of ${total} installed skills are not listed above (over the index budget); find them with ${SEARCH_SKILLS}.`;
}
