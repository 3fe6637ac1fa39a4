import type { JsonSchemaType } from '@modelcontextprotocol/server';
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import type { SkillCatalog } from '@modelcontextprotocol/server/ext/skills';
import type { SkillLibrary } from '../../skills/library.js';
import { ACTIVATE_SKILL, READ_SKILL_FILE, RUN_SKILL_SCRIPT, skillTools } from '../../skills/tools.js';
import { VERSION } from '../../version.js';

/**
 * The skills server: the Skills extension (`io.modelcontextprotocol/skills`, `skill://` resources, skills/list,
 * skills/get) from the SDK's SkillCatalog, for hosts that speak it; and for every other host, the index in the
 * instructions plus activate_skill and read_skill_file as tools. run_skill_script is not served: approving a
 * script run is the local user's decision, and the remote host's tool approval does not show what runs.
 */
export function skillsServerFactory(
  library: SkillLibrary,
  catalog: SkillCatalog,
  index: string,
): () => McpServer {
  // Built once: a 2026-07-28 HTTP server is built per request, and each fresh schema would be compiled anew.
  const instructions =
    `${library.skills.length} Agent Skills. When a task matches a skill's description, call ${ACTIVATE_SKILL} ` +
    `with its name for the full instructions, and ${READ_SKILL_FILE} for the files it mentions.\n\n${index}`;
  const tools = skillTools(library)
    .filter((t) => t.name !== RUN_SKILL_SCRIPT)
    .map((tool) => ({
      tool,
      inputSchema: fromJsonSchema<Record<string, unknown>>(tool.inputSchema as JsonSchemaType),
    }));
  return () => {
    const server = new McpServer({ name: 'tack-skills', version: VERSION }, { instructions });
    catalog.attach(server);
    for (const { tool, inputSchema } of tools) {
      server.registerTool(
        tool.name,
        {
          description: tool.description,
          inputSchema,
          annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
        },
        async (input) => {
          const result = await tool.execute(input);
          return {
            content: [{ type: 'text', text: result.text }],
            ...(result.isError ? { isError: true } : {}),
          };
        },
      );
    }
    return server;
  };
}
