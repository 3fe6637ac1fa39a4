import { McpServer, ResourceNotFoundError, ResourceTemplate } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { VERSION } from '../../version.js';
import { type Notifier, trackSubscriptions } from '../serve.js';
import { firstWords } from './corpus.js';
import type { DocsLibrary, LibraryChange } from './library.js';

const DOC_URI_TEMPLATE = 'doc://{+slug}';
export const docUri = (slug: string) => `doc://${slug}`;

/**
 * The most of one document a `read_doc` answer or a `doc://` read carries, in characters (not configurable): a
 * document may be as large as `limits.docsFileBytes`, but one answer that size would flood the client and
 * the model's context. About 250,000 tokens of English, far past what a model should read in one go.
 */
export const MAX_DOC_CHARS = 1024 * 1024;

const SearchInput = z.object({
  query: z.string().min(1).describe('Keywords or a question, e.g. "configure startup timeout"'),
  k: z.number().int().min(1).max(50).default(3).describe('How many documents to return (default 3)'),
});

const ReadInput = z.object({
  slug: z.string().min(1).describe('Document slug, e.g. "guides/install"'),
  max_words: z.number().int().min(1).max(100_000).default(400).describe('Words to return (default 400)'),
});

const SearchResult = z.object({
  results: z.array(
    z.object({
      slug: z.string().describe('Pass to read_doc, or read doc://<slug>'),
      title: z.string(),
      score: z.number().describe('BM25 relevance; higher is better, comparable within one search only'),
    }),
  ),
});

/**
 * The docs search server: `search_docs`, `read_doc` and the `doc://{+slug}` resources over a DocsLibrary.
 * One instance per connection (stdio) or request (HTTP); they all read the same library.
 */
export function buildDocsServer(library: DocsLibrary, era: 'modern' | 'legacy'): McpServer {
  const server = new McpServer(
    { name: 'tack-docs', version: VERSION },
    {
      capabilities: { resources: { subscribe: true, listChanged: true } },
      instructions:
        `Search and read ${library.size} documents. Call search_docs to find the documents that answer a question, ` +
        'then read_doc on the best slugs; doc://<slug> is the full text of one document.',
    },
  );
  trackSubscriptions(server.server, era);

  server.registerTool(
    'search_docs',
    {
      title: 'Search the docs',
      description:
        'Find the documents most relevant to a question or keywords (BM25 over titles, descriptions and text). ' +
        'Use it first, before read_doc, whenever you need something the documentation may say. ' +
        'Returns the best k documents: slug, title and score.',
      inputSchema: SearchInput,
      outputSchema: SearchResult,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ query, k }) => {
      const results = library.search(query, k);
      const text = results.length
        ? results.map((r) => `${r.slug} (${r.score}): ${r.title}`).join('\n')
        : `No document matches "${query}". Try other or fewer keywords.`;
      return { content: [{ type: 'text', text }], structuredContent: { results } };
    },
  );

  server.registerTool(
    'read_doc',
    {
      title: 'Read a document',
      description:
        'Read the start of one document by its slug (from search_docs): its title and first max_words words of ' +
        'Markdown. Use after search_docs; raise max_words, or read the resource doc://<slug>, for the whole text.',
      inputSchema: ReadInput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ slug, max_words }) => {
      const doc = library.get(slug);
      if (!doc) {
        const near = library.nearest(slug);
        return {
          isError: true,
          content: [
            {
              type: 'text',
              text: `No document with slug "${slug}".${near.length ? ` Did you mean: ${near.join(', ')}?` : ''} search_docs finds slugs.`,
            },
          ],
        };
      }
      const { text, rest, cut } = firstWords(doc.markdown, max_words, {
        words: doc.words,
        maxChars: MAX_DOC_CHARS,
      });
      const more = cut
        ? `\n\n[cut at ${MAX_DOC_CHARS.toLocaleString('en-US')} characters, the most read_doc returns${rest > 0 ? `; ${rest} more words not shown` : ''}]`
        : rest > 0
          ? `\n\n[${rest} more words: read_doc with a larger max_words, or ${docUri(slug)}]`
          : '';
      // The title heads the text unless the document opens with that very heading.
      const opensWithTitle = /^#{1,6}\s+(.+?)\s*$/m.exec(text.split('\n', 1)[0] ?? '')?.[1] === doc.title;
      return {
        content: [{ type: 'text', text: `${opensWithTitle ? '' : `# ${doc.title}\n\n`}${text}${more}` }],
      };
    },
  );

  server.registerResource(
    'doc',
    new ResourceTemplate(DOC_URI_TEMPLATE, {
      list: async () => ({
        resources: library.list().map((doc) => ({
          uri: docUri(doc.slug),
          name: doc.slug,
          title: doc.title,
          description: doc.description,
          mimeType: 'text/markdown',
        })),
      }),
    }),
    { title: 'Document', description: 'The full Markdown text of one document.', mimeType: 'text/markdown' },
    async (uri, { slug }) => {
      const wanted = Array.isArray(slug) ? slug.join('/') : String(slug);
      const doc = library.get(wanted);
      if (!doc) {
        const near = library.nearest(wanted);
        const hint = near.length ? ` Did you mean: ${near.map(docUri).join(', ')}?` : '';
        throw new ResourceNotFoundError(uri.href, `No document with slug "${wanted}".${hint}`);
      }
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: clipped(doc.markdown) }] };
    },
  );
  return server;
}

/** The document's Markdown, or its first MAX_DOC_CHARS characters and a line saying how much was left out. */
function clipped(markdown: string): string {
  if (markdown.length <= MAX_DOC_CHARS) return markdown;
  // At a line break near the cap when there is one, so the text does not end mid-word or mid-character.
  const newline = markdown.lastIndexOf('\n', MAX_DOC_CHARS);
  let end = newline > MAX_DOC_CHARS * 0.9 ? newline : MAX_DOC_CHARS;
  if (/[\uD800-\uDBFF]/.test(markdown.charAt(end - 1))) end--;
  return (
    `${markdown.slice(0, end)}\n\n[cut: this document is ${markdown.length.toLocaleString('en-US')} characters; ` +
    `doc:// returns the first ${end.toLocaleString('en-US')} of them]`
  );
}

/** Tell clients what a re-index changed: the list when documents come or go, each changed document's URI. */
export function announceChange(notifier: Notifier, change: LibraryChange): void {
  if (change.added.length || change.removed.length) notifier.resourcesChanged();
  for (const slug of change.updated) notifier.resourceUpdated(docUri(slug));
}
