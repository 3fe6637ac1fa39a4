#!/usr/bin/env node
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

/**
 * Example server: a small notes store, written with the MCP SDK v2 and served with `serveStdio`, so it speaks
 * both the 2026-07-28 revision and the 2025 `initialize` era. Notes live in memory for the life of the process.
 */
const notes = new Map<number, { title: string; body: string; tags: string[] }>([
  [
    1,
    { title: 'Release checklist', body: 'Bump the version, run npm test, tag, publish.', tags: ['release'] },
  ],
  [
    2,
    {
      title: 'MCP eras',
      body: '2026-07-28 servers answer server/discover; 2025 servers need initialize.',
      tags: ['mcp'],
    },
  ],
]);

function buildServer(): McpServer {
  const server = new McpServer(
    { name: 'example-notes', version: '1.0.0' },
    { instructions: 'Notes are numbered. Search before adding a note that may already exist.' },
  );

  server.registerTool(
    'search_notes',
    {
      title: 'Search notes',
      description:
        'Find notes whose title, body or tags contain every word of the query. Use before add_note.',
      inputSchema: z.object({ query: z.string().describe('Words to look for') }),
      outputSchema: z.object({ matches: z.array(z.object({ id: z.number(), title: z.string() })) }),
      annotations: { readOnlyHint: true },
    },
    async ({ query }) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      const matches = [...notes]
        .filter(([, n]) =>
          words.every((w) => `${n.title} ${n.body} ${n.tags.join(' ')}`.toLowerCase().includes(w)),
        )
        .map(([id, n]) => ({ id, title: n.title }));
      return {
        content: [{ type: 'text', text: matches.map((m) => `#${m.id} ${m.title}`).join('\n') || 'no match' }],
        structuredContent: { matches },
      };
    },
  );

  server.registerTool(
    'add_note',
    {
      title: 'Add a note',
      description: 'Store a new note and return its number. Use when the user asks to remember something.',
      inputSchema: z.object({ title: z.string(), body: z.string(), tags: z.array(z.string()).optional() }),
    },
    async ({ title, body, tags }) => {
      const id = Math.max(0, ...notes.keys()) + 1;
      notes.set(id, { title, body, tags: tags ?? [] });
      return { content: [{ type: 'text', text: `saved as note #${id}` }] };
    },
  );

  server.registerResource(
    'note',
    new ResourceTemplate('note://{id}', {
      list: async () => ({
        resources: [...notes].map(([id, n]) => ({
          uri: `note://${id}`,
          name: n.title,
          mimeType: 'text/markdown',
        })),
      }),
    }),
    { description: 'One note as Markdown.', mimeType: 'text/markdown' },
    async (uri, { id }) => {
      const note = notes.get(Number(id));
      const text = note ? `# ${note.title}\n\n${note.body}\n` : `No note #${String(id)}.`;
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
    },
  );

  server.registerPrompt(
    'review_notes',
    {
      description: 'Ask the model to review the notes on a topic.',
      argsSchema: z.object({ topic: z.string() }),
    },
    async ({ topic }) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Search the notes about ${topic} and summarize them.` },
        },
      ],
    }),
  );
  return server;
}

serveStdio(buildServer);
