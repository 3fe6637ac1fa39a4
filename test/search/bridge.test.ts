import { describe, expect, it } from 'vitest';
import { bridgeJson, trainBridge } from '../../bench/tool-retrieval/bridge-train.js';
import { bridgeTerms, type VocabularyBridge } from '../../src/search/bridge.js';
import { type SearchableTool, ToolSearchIndex } from '../../src/search/tool-index.js';

const TABLE: VocabularyBridge = {
  stem: true,
  stopWords: true,
  terms: {
    spreadsheet: [
      ['xlsx', 0.8],
      ['excel', 0.4],
    ],
    popular: [['rank', 0.6]],
    chart: [['excel', 0.9]],
  },
};

const tools: SearchableTool[] = [
  { server: 'office', name: 'write_xlsx', description: 'Write rows to an xlsx workbook.' },
  { server: 'office', name: 'read_pdf', description: 'Extract the text of a PDF file.' },
  { server: 'charts', name: 'get_rank', description: 'The rank of an app in the store.' },
  { server: 'charts', name: 'popular_songs', description: 'Songs people play most this week.' },
];

describe('bridgeTerms', () => {
  it('adds the tool terms of each query term at weight times their likelihood, capped at weight', () => {
    expect(bridgeTerms(TABLE, ['spreadsheet', 'chart'], 0.5)).toEqual([
      { term: 'xlsx', weight: 0.4, expansion: true },
      // 0.4 from "spreadsheet" and 0.9 from "chart": 1.3, capped at 1.
      { term: 'excel', weight: 0.5, expansion: true },
    ]);
  });

  it('leaves out terms the query already has, words the table lacks, and everything at weight 0', () => {
    expect(bridgeTerms(TABLE, ['spreadsheet', 'xlsx'], 0.5)).toEqual([
      { term: 'excel', weight: 0.2, expansion: true },
    ]);
    expect(bridgeTerms(TABLE, ['constructor', 'toString'], 0.5)).toEqual([]);
    expect(bridgeTerms(TABLE, ['spreadsheet'], 0)).toEqual([]);
  });
});

describe('ToolSearchIndex with a vocabulary bridge', () => {
  const names = (index: ToolSearchIndex, query: string) => index.search(query, 4).map((h) => h.tool.name);
  const bridged = ToolSearchIndex.build(tools, { ranking: { bridge: { weight: 0.25 } }, bridge: TABLE });

  it('finds a tool by a word its text lacks only with the bridge on', () => {
    expect(names(ToolSearchIndex.build(tools), 'save as a spreadsheet')).toEqual([]);
    // (Its server's other tools come after it, by server evidence.)
    expect(names(bridged, 'save as a spreadsheet')[0]).toBe('write_xlsx');
    expect(bridged.search('save as a spreadsheet', 1, { explain: true })[0]?.explain?.expansion).toContain(
      'xlsx',
    );
  });

  it('ranks a literal match first', () => {
    expect(names(bridged, 'popular')[0]).toBe('popular_songs');
    expect(names(bridged, 'popular')).toContain('get_rank');
  });

  it('ignores the table at weight 0 and when it was cut into terms otherwise than the ranking', () => {
    const off = ToolSearchIndex.build(tools, { bridge: TABLE });
    expect(off.ranking.bridge.weight).toBe(0);
    expect(names(off, 'spreadsheet')).toEqual([]);
    const unstemmed = ToolSearchIndex.build(tools, {
      ranking: { bridge: { weight: 0.25 } },
      bridge: { ...TABLE, stem: false },
    });
    expect(names(unstemmed, 'spreadsheet')).toEqual([]);
  });
});

describe('trainBridge', () => {
  // Three tools that never say "spreadsheet", each asked for by requests that do; one that says it.
  const catalog: SearchableTool[] = [
    { server: 's', name: 'write_xlsx', description: 'Write an xlsx workbook.' },
    { server: 's', name: 'append_xlsx', description: 'Append rows to an xlsx file.' },
    { server: 's', name: 'format_xlsx', description: 'Format the cells of an xlsx sheet.' },
    { server: 's', name: 'spreadsheet_info', description: 'Facts about a spreadsheet.' },
    { server: 's', name: 'send_mail', description: 'Send an email message.' },
    { server: 's', name: 'read_mail', description: 'Read email messages.' },
  ];
  const queries = [
    { query: 'save my data as a spreadsheet', gold: ['write_xlsx'] },
    { query: 'add lines to the spreadsheet', gold: ['s/append_xlsx'] },
    { query: 'make the spreadsheet bold', gold: ['format_xlsx'] },
    { query: 'make the spreadsheet bold please', gold: ['format_xlsx'] },
    { query: 'what is in this spreadsheet', gold: ['spreadsheet_info'] },
    { query: 'mail my boss', gold: ['send_mail'] },
    { query: 'check my inbox', gold: ['read_mail'] },
  ];

  it('learns query words the gold tools lack, counted once per tool, with P(tool word | query word)', () => {
    const table = trainBridge([{ name: 'x', tools: catalog, queries }]);
    // "spreadsheet" is missing from three tools, which all say "xlsx": likelihood 1; lift 6/3 = 2.
    expect(table.terms.spreadsheet).toEqual([['xlsx', 1]]);
    // "bold" has one tool behind it, however many requests: under the three tools asked.
    expect(table.terms.bold).toBeUndefined();
    expect(table).toMatchObject({ stem: true, stopWords: true });
  });

  it('is deterministic and writes one query word per line', () => {
    const a = bridgeJson(trainBridge([{ name: 'x', tools: catalog, queries }]));
    const b = bridgeJson(trainBridge([{ name: 'x', tools: catalog, queries: [...queries].reverse() }]));
    expect(a).toBe(b);
    expect(JSON.parse(a)).toEqual(trainBridge([{ name: 'x', tools: catalog, queries }]));
    expect(a.split('\n').filter((l) => l.includes('"spreadsheet"'))).toHaveLength(1);
  });
});
