import { describe, expect, it, vi } from 'vitest';
import { TackError } from '../../src/errors.js';
import { embeddingModel, semanticRanker } from '../../src/search/embeddings.js';
import { embeddingText, hybridSearch, textDigest } from '../../src/search/semantic.js';
import { type SearchableTool, ToolSearchIndex } from '../../src/search/tool-index.js';
import { TackStore } from '../../src/store/store.js';
import { startEmbeddingsServer } from '../helpers/embeddings-server.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

/** What the toy model knows: coins are crypto, rain and umbrellas are weather. */
const CONCEPTS = {
  dogecoin: 'crypto',
  bitcoin: 'crypto',
  cryptocurrencies: 'crypto',
  umbrella: 'weather',
  rain: 'weather',
  forecast: 'weather',
};

const TOOLS: SearchableTool[] = [
  { server: 'markets', name: 'quote', description: 'Prices of stocks and cryptocurrencies.' },
  { server: 'markets', name: 'news', description: 'Financial news by company.' },
  { server: 'wx', name: 'get_forecast', description: 'Forecast for a city.' },
  { server: 'notes', name: 'add_note', description: 'Store a new note.' },
];

async function server(options: Parameters<typeof startEmbeddingsServer>[0] = {}) {
  const s = await startEmbeddingsServer({ concepts: CONCEPTS, ...options });
  scope.defer(() => s.close());
  return s;
}

function store(): TackStore {
  const s = TackStore.open(':memory:');
  scope.defer(() => s.close());
  return s;
}

const names = (hits: Array<{ tool: SearchableTool }>) => hits.map((h) => h.tool.name);

describe('semantic ranking through the AI SDK, against a local server speaking the OpenAI embeddings wire format', () => {
  it('finds what no word of the query says, fused with the lexical ranking', async () => {
    const endpoint = await server();
    const index = ToolSearchIndex.build(TOOLS);
    // Lexically, "dogecoin" is in no definition.
    expect(index.search('dogecoin')).toEqual([]);
    const ranker = semanticRanker(
      { model: 'openai-compatible:toy-embed', baseURL: endpoint.url, apiKey: 'sk-local' },
      { cache: store().toolEmbeddings },
    );
    const result = await hybridSearch(index, TOOLS, ['dogecoin', 'umbrella tomorrow'], 4, ranker);
    expect(result.semantic).toBe('used');
    expect(names(result.hits).slice(0, 2).sort()).toEqual(['get_forecast', 'quote']);
    // The wire format the providers send: the model id, a list of inputs, the key as a bearer token.
    const first = endpoint.requests[0]!;
    expect(first.model).toBe('toy-embed');
    expect(first.input).toEqual(TOOLS.map(embeddingText));
    expect(first.authorization).toBe('Bearer sk-local');
    expect(endpoint.requests[1]!.input).toEqual(['dogecoin', 'umbrella tomorrow']);
  });

  it('embeds a definition once: cached in the store by digest, embedded again only when it changes', async () => {
    const endpoint = await server();
    const db = store();
    const settings = { model: 'openai:toy-embed', baseURL: endpoint.url, apiKey: 'sk-local' };
    const first = semanticRanker(settings, { cache: db.toolEmbeddings });
    await hybridSearch(ToolSearchIndex.build(TOOLS), TOOLS, ['rain'], 3, first);
    expect(endpoint.texts).toHaveLength(TOOLS.length + 1);
    expect(await db.toolEmbeddings.count(`openai:toy-embed|${endpoint.url}|`)).toBe(TOOLS.length);

    // A new process (a new ranker) with the same store: only the query is embedded.
    const second = semanticRanker(settings, { cache: db.toolEmbeddings });
    await hybridSearch(ToolSearchIndex.build(TOOLS), TOOLS, ['rain'], 3, second);
    expect(endpoint.texts.slice(TOOLS.length + 1)).toEqual(['rain']);

    // One definition changes: that one is embedded, the rest come from the cache.
    const changed = TOOLS.map((t) =>
      t.name === 'add_note' ? { ...t, description: 'Store a note with tags.' } : t,
    );
    await hybridSearch(ToolSearchIndex.build(changed), changed, ['rain'], 3, second);
    expect(endpoint.texts.slice(TOOLS.length + 2)).toEqual([embeddingText(changed[3]!), 'rain']);
    expect(
      (
        await db.toolEmbeddings.get(`openai:toy-embed|${endpoint.url}|`, [
          textDigest(embeddingText(changed[3]!)),
        ])
      ).size,
    ).toBe(1);
  });

  it('searches lexically while the endpoint is down, says so once, and uses it again when it answers', async () => {
    const endpoint = await server({ failing: true });
    const heard: string[] = [];
    const index = ToolSearchIndex.build(TOOLS);
    const ranker = semanticRanker(
      { model: 'openai-compatible:toy-embed', baseURL: endpoint.url },
      { onUnavailable: (reason) => heard.push(reason) },
    );
    const down = await hybridSearch(index, TOOLS, ['forecast for a city'], 2, ranker);
    expect(down.semantic).toBe('unavailable');
    expect(names(down.hits)).toEqual(names(index.search('forecast for a city', 2)));
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatch(/overloaded|503|not ready/i);
    // Resting: the endpoint is not asked again at once, and the outage is not reported twice.
    const asked = endpoint.requests.length;
    expect((await hybridSearch(index, TOOLS, ['rain'], 2, ranker)).semantic).toBe('unavailable');
    expect(endpoint.requests.length).toBe(asked);
    expect(heard).toHaveLength(1);

    // An endpoint nobody listens on at all (connection refused) is the same: lexical, never a thrown search.
    await endpoint.close();
    const refused = semanticRanker({ model: 'openai-compatible:toy-embed', baseURL: endpoint.url });
    expect((await hybridSearch(index, TOOLS, ['forecast'], 2, refused)).semantic).toBe('unavailable');

    // Back after the pause: the semantic list is used again, and a later outage is reported anew.
    // The pause is the ranker's clock, moved on by the test: a short real pause (it was 50 ms) could pass between
    // the two searches below on a loaded machine, and the second would then use the endpoint already.
    const flaky = await server({ failing: true });
    const retrying = semanticRanker(
      { model: 'openai-compatible:toy-embed', baseURL: flaky.url },
      { onUnavailable: (reason) => heard.push(reason), retryAfterMs: 60_000 },
    );
    expect((await hybridSearch(index, TOOLS, ['umbrella'], 2, retrying)).semantic).toBe('unavailable');
    flaky.setFailing(false);
    expect((await hybridSearch(index, TOOLS, ['umbrella'], 2, retrying)).semantic).toBe('unavailable');
    const now = Date.now;
    scope.defer(() => {
      vi.restoreAllMocks();
    });
    vi.spyOn(Date, 'now').mockImplementation(() => now() + 61_000);
    const up = await hybridSearch(index, TOOLS, ['umbrella'], 2, retrying);
    vi.restoreAllMocks();
    expect(up.semantic).toBe('used');
    expect(names(up.hits)[0]).toBe('get_forecast');
    expect(heard).toHaveLength(2);
  });

  it('names a model it cannot make as a configuration error', () => {
    const error = (() => {
      try {
        embeddingModel({ model: 'openai-compatible:nomic-embed-text' });
      } catch (e) {
        return e;
      }
    })();
    expect(TackError.isInstance(error) && error.code).toBe('CONFIG_INVALID');
    expect((error as TackError).message).toContain('needs "baseURL"');
    expect(() => embeddingModel({ model: 'cohere:embed' })).toThrow(/names no embedding model/);
  });

  it('reads toolSearch.embeddings from tack.json, ${VAR} expanded, and names a bad entry', () => {
    const p = scope.project('tack-embeddings-config-');
    p.write('tack.json', {
      toolSearch: {
        embeddings: {
          model: 'openai-compatible:nomic-embed-text',
          baseURL: '${EMB_URL}',
          apiKey: '${EMB_KEY}',
        },
      },
    });
    p.env.EMB_URL = 'http://127.0.0.1:11434/v1';
    p.env.EMB_KEY = 'sk-from-env';
    expect(p.load().toolSearch.embeddings).toEqual({
      model: 'openai-compatible:nomic-embed-text',
      baseURL: 'http://127.0.0.1:11434/v1',
      apiKey: 'sk-from-env',
    });
    p.write('tack.json', { toolSearch: { embeddings: { model: 'text-embedding-3-small' } } });
    expect(() => p.load()).toThrow(/toolSearch\.embeddings\.model/);
  });
});
