import {
  fromJsonSchema,
  type JsonSchemaType,
  McpServer,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import { TackError } from '../../errors.js';
import type { KnowledgeBase } from '../../knowledge/knowledge.js';
import { conceptUri, renderConcept } from '../../knowledge/render.js';
import { READ_CONCEPT, RUN_COMPUTATION, SEARCH_KNOWLEDGE } from '../../knowledge/tools.js';
import type { NativeTool } from '../../tools/native.js';
import { VERSION } from '../../version.js';

const CONCEPT_URI_TEMPLATE = 'okf://{bundle}/{+id}';

/**
 * The knowledge server: search_knowledge, read_concept (and run_computation when a runtime is configured) as
 * tools, and every concept as an `okf://<bundle>/<id>` resource. What it returns always opens with the
 * concept's type, trust tier, status, staleness and sources. Tools and schemas are built once: an HTTP server
 * of the 2026-07-28 era is built per request.
 */
export function knowledgeServerFactory(
  base: KnowledgeBase,
  tools: readonly NativeTool[],
  now: () => number = Date.now,
): () => McpServer {
  const computes = tools.some((t) => t.name === RUN_COMPUTATION);
  const instructions =
    `Curated knowledge, ${base.size} concepts in ${base.bundles.length} bundles:\n${base.summary(now())}\n\n` +
    `Call ${SEARCH_KNOWLEDGE} to find concepts on a topic, then ${READ_CONCEPT} for one. Weigh each by its trust ` +
    'tier (unverified < machine-confirmed < human-reviewed), status and staleness, and cite its okf:// URI.' +
    (computes
      ? ` For a figure an Attested Computation defines, call ${RUN_COMPUTATION} with its parameter values instead ` +
        'of writing a query: only an attested result may be reported, and a refused run has no value to report.'
      : '');
  const compiled = tools.map((tool) => ({
    tool,
    inputSchema: fromJsonSchema<Record<string, unknown>>(tool.inputSchema as JsonSchemaType),
  }));
  return () => {
    const server = new McpServer({ name: 'tack-knowledge', version: VERSION }, { instructions });
    for (const { tool, inputSchema } of compiled) {
      const readOnly = tool.name === SEARCH_KNOWLEDGE || tool.name === READ_CONCEPT;
      server.registerTool(
        tool.name,
        {
          description: tool.description,
          inputSchema,
          // run_computation queries a database: read-only by construction, but it reaches outside the bundle.
          annotations: { readOnlyHint: true, idempotentHint: readOnly, openWorldHint: !readOnly },
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
    server.registerResource(
      'concept',
      new ResourceTemplate(CONCEPT_URI_TEMPLATE, {
        list: async () => ({
          resources: base.bundles.flatMap((bundle) =>
            [...bundle.concepts.values()].map((c) => ({
              uri: conceptUri(bundle.name, c.id),
              name: `${bundle.name}/${c.id}`,
              title: c.title,
              ...(c.description ? { description: c.description } : {}),
              mimeType: 'text/markdown',
            })),
          ),
        }),
      }),
      {
        title: 'Knowledge concept',
        description: 'One OKF concept: its trust, status, staleness and sources, then its Markdown body.',
        mimeType: 'text/markdown',
      },
      async (uri) => {
        try {
          const { bundle, concept } = base.resolve(uri.href);
          return {
            contents: [
              { uri: uri.href, mimeType: 'text/markdown', text: renderConcept(bundle, concept, now()) },
            ],
          };
        } catch (error) {
          if (TackError.isInstance(error))
            throw new ResourceNotFoundError(
              uri.href,
              `${error.message}${error.hint ? ` ${error.hint}` : ''}`,
            );
          throw error;
        }
      },
    );
    return server;
  };
}
