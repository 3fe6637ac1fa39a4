import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BaselineToolIndex } from '../../bench/tool-retrieval/baseline.js';
import { compareRetrieval, loadQueriesFile, loadToolsFile } from '../../bench/tool-retrieval/metrics.js';
import { capabilityClauses, querySegments } from '../../src/search/segments.js';
import { nameWords, tokenize } from '../../src/search/tokenize.js';
import { type SearchableTool, schemaText, ToolSearchIndex } from '../../src/search/tool-index.js';
import { REPO } from '../helpers/project.js';

const FIXTURE = join(REPO, 'test/fixtures/tool-search');
const names = (hits: { tool: SearchableTool }[]) => hits.map((h) => h.tool.name);

describe('tokenize', () => {
  it('splits snake, kebab and camel case, lower-cases, stems and drops stop words', () => {
    expect(tokenize('getHTTPResponse create_issue list-files PDFTool', { stem: true })).toEqual([
      'get',
      'http',
      'respons',
      'creat',
      'issu',
      'list',
      'file',
      'pdf',
      'tool',
    ]);
    expect(tokenize('Can you find the issues for me?', { stopWords: true })).toEqual(['find', 'issues']);
    expect(tokenize('Can you find the issues for me?', { stopWords: true, stem: true })).toEqual([
      'find',
      'issu',
    ]);
  });

  it('drops the mcp__<server>__ prefix of a model-visible name', () => {
    expect(nameWords('mcp__github__create_issue')).toBe('create issue');
    expect(nameWords('list-pull.requests')).toBe('list pull requests');
    expect(nameWords('mcp__')).toBe('mcp');
  });

  it('cuts Chinese and Japanese runs into characters and overlapping pairs, inside mixed text too', () => {
    expect(tokenize('创建任务')).toEqual(['创', '建', '任', '务', '创建', '建任', '任务']);
    expect(tokenize('在GitHub上创建')).toEqual(['在', 'git', 'hub', '上', '创', '建', '上创', '创建']);
    expect(tokenize('ファイル')).toEqual(['フ', 'ァ', 'イ', 'ル', 'ファ', 'ァイ', 'イル']);
  });

  it('normalises full-width forms (NFKC)', () => {
    expect(tokenize('ＧｉｔＨｕｂ')).toEqual(['git', 'hub']);
  });
});

describe('schemaText', () => {
  it('collects parameter names as words and descriptions, nested objects and array items included', () => {
    const text = schemaText({
      type: 'object',
      description: 'the schema itself is not a parameter',
      properties: {
        repoName: { type: 'string', description: 'owner/name' },
        options: {
          type: 'object',
          properties: { branch_name: { type: 'string', description: 'Branch to read' } },
        },
        labels: { type: 'array', items: { type: 'object', properties: { colour: { type: 'string' } } } },
        target: { anyOf: [{ type: 'object', properties: { commitSha: { type: 'string' } } }] },
      },
    });
    for (const part of ['repoName', 'owner/name', 'branch name', 'Branch to read', 'colour', 'commitSha'])
      expect(text).toContain(part);
    expect(text).not.toContain('the schema itself');
  });

  it('survives a schema that refers to itself', () => {
    const schema: Record<string, unknown> = { type: 'object', properties: {} };
    (schema.properties as Record<string, unknown>).self = schema;
    expect(() => schemaText(schema)).not.toThrow();
  });
});

const GITHUB: SearchableTool[] = [
  { server: 'github', name: 'mcp__github__create_issue', description: 'Open a new issue.' },
  { server: 'github', name: 'mcp__github__listPullRequests', description: 'Newest first.' },
  {
    server: 'github',
    name: 'mcp__github__get_file_contents',
    description: 'Read a file at a given ref.',
    inputSchema: {
      type: 'object',
      properties: {
        options: {
          type: 'object',
          properties: { branchName: { type: 'string', description: 'Defaults to main' } },
        },
      },
    },
  },
];
const FILES: SearchableTool[] = [
  { server: 'files', name: 'read_file', description: 'Read the complete contents of a file.' },
  { server: 'files', name: 'write_file', description: 'Create or overwrite a file.' },
];

describe('ToolSearchIndex', () => {
  it('finds a tool by the words of its name, whatever the case style', () => {
    const index = ToolSearchIndex.build([...GITHUB, ...FILES]);
    expect(names(index.search('create an issue', 1))).toEqual(['mcp__github__create_issue']);
    expect(names(index.search('pull requests', 1))).toEqual(['mcp__github__listPullRequests']);
    // The baseline splits names the same way.
    expect(names(BaselineToolIndex.build([...GITHUB, ...FILES]).search('pull requests', 1))).toEqual([
      'mcp__github__listPullRequests',
    ]);
  });

  it('finds a tool by a nested parameter name, and not when parameters are off', () => {
    const tools = [...GITHUB, ...FILES];
    expect(names(ToolSearchIndex.build(tools).search('branch', 1))).toEqual([
      'mcp__github__get_file_contents',
    ]);
    expect(ToolSearchIndex.build(tools, { ranking: { params: false } }).search('branch')).toEqual([]);
  });

  it('matches across inflections (stemming)', () => {
    const index = ToolSearchIndex.build(FILES);
    expect(names(index.search('overwriting files', 1))).toEqual(['write_file']);
  });

  it('answers a query made only of stop words, and nothing for an empty one', () => {
    const index = ToolSearchIndex.build([
      { server: 's', name: 'what_can_you_do', description: 'Lists abilities' },
    ]);
    expect(names(index.search('what can you do'))).toEqual(['what_can_you_do']);
    expect(index.search('   ')).toEqual([]);
    expect(index.search('?!')).toEqual([]);
    expect(index.search('abilities', 0)).toEqual([]);
  });

  it('finds a Chinese description with a Chinese query', () => {
    const tools: SearchableTool[] = [
      ...FILES,
      { server: 'feishu', name: 'create_task', description: '创建一个新的任务并分配给团队成员。' },
      { server: 'feishu', name: 'send_message', description: '向群聊或用户发送一条文本消息。' },
    ];
    const index = ToolSearchIndex.build(tools);
    expect(names(index.search('创建任务', 1))).toEqual(['create_task']);
    expect(names(index.search('发消息', 1))).toEqual(['send_message']);
    expect(BaselineToolIndex.build(tools).search('创建任务')).toEqual([]);
  });

  it('indexes the server name as a field of every tool of that server', () => {
    const index = ToolSearchIndex.build([...GITHUB, ...FILES]);
    expect(new Set(names(index.search('github', 5)))).toEqual(new Set(GITHUB.map((t) => t.name)));
  });

  it('ranks servers as documents: a server that says what it is for lends its tools evidence', () => {
    const tools: SearchableTool[] = [
      { server: 'jot', name: 'create_entry', description: 'Create an entry with a title and a body.' },
      { server: 'jot', name: 'append_text', description: 'Append text to an existing entry.' },
      { server: 'disk', name: 'write_file', description: 'Create or overwrite a file.' },
      { server: 'calendar', name: 'create_event', description: 'Create a calendar event.' },
      { server: 'mail', name: 'send_message', description: 'Send an email message.' },
    ];
    const servers = { jot: { title: 'Notes', instructions: 'Save, organize and find your notes.' } };
    // No tool of `jot` says "save" or "notes"; its server does.
    const index = ToolSearchIndex.build(tools, { servers });
    expect(index.search('save this to my notes', 2).map((h) => h.tool.server)).toEqual(['jot', 'jot']);
    const off = ToolSearchIndex.build(tools, { servers, ranking: { server: { weight: 0 } } });
    expect(off.search('save this to my notes', 5).map((h) => h.tool.server)).not.toContain('jot');
    const [hit] = index.search('save notes', 1, { explain: true });
    expect(hit!.explain!.server).toBeGreaterThan(0);
  });

  it('merges several queries so each capability gets its best tools near the top', () => {
    const tools: SearchableTool[] = [
      ...FILES,
      { server: 'files', name: 'read_text', description: 'Read a text file, the whole file or its head.' },
      { server: 'files', name: 'read_media', description: 'Read an image or audio file.' },
      { server: 'files', name: 'read_many', description: 'Read several files at once.' },
      ...GITHUB.slice(0, 2),
    ];
    const index = ToolSearchIndex.build(tools);
    const both = names(index.searchMany(['read a file', 'open an issue'], 2));
    expect(both).toContain('mcp__github__create_issue');
    expect(both.some((n) => n.startsWith('read'))).toBe(true);
    // Request steps are off by default (they gained nothing on the sets left out), but the switch still works.
    // With field weights and coordination (the ranking before that), one request with the same needs ranked
    // whole lets the file tools crowd the issue out of the top three...
    const request = 'read the whole text file and its head, then open an issue';
    const weighted = {
      coordination: 1,
      bm25: { saturation: 'joint' as const },
      weights: { name: 3, title: 2, params: 0.5, server: 0.5 },
    };
    const whole = ToolSearchIndex.build(tools, { ranking: { ...weighted, segments: { weight: 0 } } });
    expect(names(whole.search(request, 3))).not.toContain('mcp__github__create_issue');
    // ...ranked step by step as well (request steps at full weight), the issue gets its place.
    const steps = ToolSearchIndex.build(tools, { ranking: { ...weighted, segments: { weight: 1 } } });
    expect(names(steps.search(request, 3))).toContain('mcp__github__create_issue');
    // One query among several is exactly a search for it.
    expect(index.searchMany(['read a file'], 3)).toEqual(index.search('read a file', 3));
  });

  it("says why a tool matched: the words, their fields and each query's rank", () => {
    const index = ToolSearchIndex.build([...GITHUB, ...FILES]);
    const hit = index
      .searchMany(['branch contents', 'write'], 3, { explain: true })
      .find((h) => h.tool.name === 'mcp__github__get_file_contents');
    expect(hit!.explain!.terms).toEqual(
      expect.arrayContaining([
        { term: 'branch', fields: ['params'] },
        { term: 'content', fields: ['name'] },
      ]),
    );
    // Third for "write" too: query expansion adds the best tools' words (file, read, content) to that query.
    expect(hit!.explain!.ranks).toEqual([
      { query: 'branch contents', rank: 1 },
      { query: 'write', rank: 3 },
    ]);
    expect(hit!.explain!.expansion).toEqual(expect.arrayContaining(['file']));
    expect(index.search('branch')[0]!.explain).toBeUndefined();
  });

  it('finds a tool by an enum value of its parameters, and not when enum values are off', () => {
    const tools: SearchableTool[] = [
      ...FILES,
      {
        server: 'wx',
        name: 'forecast',
        description: 'Weather for a city.',
        inputSchema: {
          type: 'object',
          properties: { unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
        },
      },
    ];
    expect(names(ToolSearchIndex.build(tools).search('fahrenheit', 1))).toEqual(['forecast']);
    expect(ToolSearchIndex.build(tools, { ranking: { enums: false } }).search('fahrenheit')).toEqual([]);
  });

  it('expands the query with the words of the best tools (pseudo-relevance feedback)', () => {
    const tools: SearchableTool[] = [
      { server: 'pay', name: 'refund_payment', description: 'Refund a card payment to the customer.' },
      { server: 'pay', name: 'capture_payment', description: 'Capture an authorised card payment.' },
      { server: 'pay', name: 'list_disputes', description: 'Card chargebacks opened by the customer bank.' },
      { server: 'docs', name: 'search_docs', description: 'Search the handbook.' },
    ];
    const ranking = { server: { weight: 0 } };
    const index = ToolSearchIndex.build(tools, {
      ranking: { ...ranking, expansion: { docs: 2, terms: 4, weight: 0.5 } },
    });
    const hits = index.search('refund', 4, { explain: true });
    expect(names(hits)[0]).toBe('refund_payment');
    // `list_disputes` shares no word with "refund"; it is reached through the words of the best tool.
    expect(names(hits)).toContain('list_disputes');
    expect(hits.find((h) => h.tool.name === 'list_disputes')!.explain!.expansion.length).toBeGreaterThan(0);
    const plain = ToolSearchIndex.build(tools, { ranking: { ...ranking, expansion: { weight: 0 } } });
    expect(names(plain.search('refund', 4))).toEqual(['refund_payment']);
  });

  it('replaces one server incrementally, leaving the others as they were', () => {
    const index = ToolSearchIndex.build([...GITHUB, ...FILES]);
    expect(index.size).toBe(5);
    index.replaceServer(
      'files',
      [
        { server: 'files', name: 'delete_file', description: 'Remove a file for good.' },
        { server: 'other', name: 'ignored', description: 'belongs to another server' },
      ],
      { instructions: 'Disk tools, now with deletion.' },
    );
    expect(index.size).toBe(4);
    expect(index.search('overwrite')).toEqual([]);
    expect(names(index.search('remove file', 1))).toEqual(['delete_file']);
    expect(index.search('another server')).toEqual([]);
    expect(names(index.search('create issue', 1))).toEqual(['mcp__github__create_issue']);

    index.removeServer('github');
    expect(index.size).toBe(1);
    expect(index.search('issue')).toEqual([]);
    index.removeServer('never-there');
    index.replaceServer('github', GITHUB);
    expect(index.size).toBe(4);
    expect(names(index.search('issue', 1))).toEqual(['mcp__github__create_issue']);
  });

  it('scores the same after a replace as a fresh build of the same catalog', () => {
    const replaced = ToolSearchIndex.build([...GITHUB, ...FILES]);
    replaced.replaceServer('files', FILES);
    const fresh = ToolSearchIndex.build([...GITHUB, ...FILES]);
    for (const query of [
      'read a file',
      'open issue',
      'pull request branch',
      'create a file, then open an issue',
    ])
      expect(replaced.search(query).map((h) => [h.tool.name, h.score.toFixed(6)])).toEqual(
        fresh.search(query).map((h) => [h.tool.name, h.score.toFixed(6)]),
      );
  });

  it('beats the plain BM25 baseline on a small real-world catalog', () => {
    const tools = loadToolsFile(join(FIXTURE, 'tools.json'));
    const queries = loadQueriesFile(join(FIXTURE, 'queries.jsonl'));
    const result = compareRetrieval(tools, queries, [1, 5]);
    expect(result.unknownGold).toEqual([]);
    expect(result.tack.hitAt[5]!).toBeGreaterThan(result.baseline.hitAt[5]!);
    expect(result.tack.mrr).toBeGreaterThan(result.baseline.mrr);
    expect(result.tack.hitAt[5]!).toBeGreaterThanOrEqual(0.75);
  });
});

describe('request steps', () => {
  it('cuts a request where a person marks a new step, and leaves a one-step request whole', () => {
    expect(
      querySegments('Book a flight to Lisbon, then send the itinerary to my wife. Add it to my calendar'),
    ).toEqual(['Book a flight to Lisbon', 'send the itinerary to my wife', 'Add it to my calendar']);
    expect(querySegments('give me the number of movies directed by Sofia Coppola')).toEqual([]);
    expect(querySegments('1. fetch the page 2. summarise it')).toEqual(['fetch the page', 'summarise it']);
  });

  it('cuts capability clauses at commas and "and" too, keeping one-word parts with their neighbour', () => {
    expect(capabilityClauses('find a recipe with beef, the nutrition facts and a grocery list')).toEqual([
      'find a recipe with beef',
      'the nutrition facts',
      'a grocery list',
    ]);
    expect(capabilityClauses('read the file')).toEqual([]);
  });
});
