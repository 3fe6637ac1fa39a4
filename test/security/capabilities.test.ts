import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Capability, labelTool } from '../../src/security/capabilities.js';
import { tack } from '../helpers/cli.js';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

const privateData = (tool: Parameters<typeof labelTool>[0]) =>
  labelTool(tool).find((l) => l.capability === ('private-data' satisfies Capability));

describe('private-data guesses', () => {
  it('a verb is not private data: reading a server’s own documentation is not', () => {
    const slug = { properties: { slug: {}, max_words: {} } };
    expect(
      privateData({ name: 'read_doc', description: 'Read a document by its slug.', inputSchema: slug }),
    ).toBe(undefined);
    expect(privateData({ name: 'search_docs', inputSchema: { properties: { query: {} } } })).toBe(undefined);
    expect(privateData({ name: 'read_chapter', inputSchema: { properties: { n: {} } } })).toBe(undefined);
  });

  it('a private object in the name, a path or file parameter, or the description still says so', () => {
    expect(privateData({ name: 'read_file', inputSchema: { properties: { path: {} } } })?.why).toBe(
      'name: file',
    );
    expect(privateData({ name: 'list_contacts' })?.why).toBe('name: contacts');
    expect(privateData({ name: 'search_notes' })?.why).toBe('name: notes');
    expect(privateData({ name: 'read', inputSchema: { properties: { path: {} } } })?.why).toBe(
      'parameter: path',
    );
    expect(privateData({ name: 'read_document', inputSchema: { properties: { documentId: {} } } })?.why).toBe(
      'parameter: documentId',
    );
    expect(
      privateData({ name: 'get_doc', description: "Read one of the user's personal documents." })?.why,
    ).toBe('description: "personal"');
  });

  it('`tack tools --security` on the examples: the docs server holds no private data', async () => {
    const p = scope.project('tack-caps-');
    const run = await tack(['tools', '--security', '--config', join(REPO, 'examples', 'tack.json')], {
      cwd: p.dir,
      env: p.env,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^mcp__docs__read_doc\s+\S+\s+-$/m);
    expect(run.stdout).toMatch(/^mcp__docs__search_docs\s+\S+\s+-$/m);
    expect(run.stdout).toMatch(/^mcp__notes__search_notes\s+\S+\s+private-data \(default: name: notes\)$/m);
    expect(run.stdout).toContain('private data 1,');
  });
});
