import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/host.js';
import { firstWords, readDoc } from '../../src/servers/docs/corpus.js';
import { MAX_DOC_CHARS } from '../../src/servers/docs/server.js';
import { type RunningDocsServer, startDocsServer } from '../../src/servers/docs/start.js';
import { BIN } from '../helpers/cli.js';
import { FAST_RESTARTS, REPO, tempProject } from '../helpers/project.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'docs');

/** A docs server over HTTP (the library API, caps as options) with a client connected to it. */
async function serveFolder(
  root: string,
  limits: Parameters<typeof startDocsServer>[0]['limits'],
): Promise<{
  server: RunningDocsServer;
  client: Client;
  warnings: string[];
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const warnings: string[] = [];
  const server = await startDocsServer({
    folder: root,
    http: { port: 0 },
    limits,
    onWarning: (message) => warnings.push(message),
  });
  const client = new Client({ name: 'limits', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url!)));
  return {
    server,
    client,
    warnings,
    async [Symbol.asyncDispose]() {
      await client.close();
      await server.close();
    },
  };
}

const slugsOf = async (client: Client) => (await client.listResources()).resources.map((r) => r.name).sort();
const textOf = (result: unknown) =>
  ((result as { content: Array<{ text: string }> }).content[0] ?? { text: '' }).text;

describe('serve-docs limits', () => {
  it('skips a document over limits.docsFileBytes from tack.json, naming it, and serves the rest, while watching too', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    cpSync(FIXTURE, root, { recursive: true });
    writeFileSync(join(root, 'huge.md'), `# Huge\n\n${'word '.repeat(200)}`.slice(0, 1001));
    project.write('tack.json', {
      mcpServers: {
        // `tack serve-docs` loads this same tack.json (it runs in the project) and takes its caps from `limits`.
        docs: {
          command: process.execPath,
          args: [BIN, 'serve-docs', root],
          cwd: project.dir,
          env: { TACK_HOME: project.home, TACK_TRUST_PROJECT: '1' },
        },
      },
      limits: { docsFileBytes: 1000 },
    });
    const host = await McpHost.start({ config: project.load(), restartPolicy: FAST_RESTARTS });
    try {
      expect(host.servers()[0]?.status).toBe('connected');
      const uris = () => host.catalog.listingsOf('docs')!.resources.map((r) => r.uri);
      expect(uris()).toContain('doc://guides/install');
      expect(uris()).not.toContain('doc://huge');
      expect((await host.callTool('mcp__docs__read_doc', { slug: 'windows' })).isError).toBeFalsy();
      const stderr = () => host.connection('docs').log.tail().join('\n');
      await expect
        .poll(stderr, { timeout: 5000 })
        .toContain(
          `tack serve-docs: skipped ${join(root, 'huge.md')}: 1,001 bytes, over the 1,000 bytes cap on one document. ` +
            'Raise limits.docsFileBytes in tack.json to serve it.',
        );

      // Edits meet the same cap: a document that grows past it leaves, one that shrinks under it comes in.
      writeFileSync(join(root, 'windows.md'), `# Windows\n\n${'grown '.repeat(200)}`);
      await expect.poll(uris, { timeout: 5000 }).not.toContain('doc://windows');
      expect(stderr()).toContain(`skipped ${join(root, 'windows.md')}: 1.2 KiB, over the 1,000 bytes cap`);
      writeFileSync(join(root, 'huge.md'), '# Huge, trimmed');
      await expect.poll(uris, { timeout: 5000 }).toContain('doc://huge');
    } finally {
      await host.close();
    }
  });

  it('reads no folder deeper than docsDepth in a 300-level tree, at start and while watching, and shrugs off link loops', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    const level = (n: number) => join(root, ...Array<string>(n).fill('d'));
    mkdirSync(level(300), { recursive: true });
    for (const n of [1, 32, 33, 300]) writeFileSync(join(level(n), `level-${n}.md`), `# Level ${n}`);
    writeFileSync(join(root, 'top.md'), '# Top');
    // Links back up the tree: a walk or a watcher that followed either would never end.
    symlinkSync('.', join(root, 'loop'));
    symlinkSync('..', join(level(1), 'up'));
    await using served = await serveFolder(root, { docsDepth: 32 });
    const deep = (n: number) => `${'d/'.repeat(n)}level-${n}`;
    expect(await slugsOf(served.client)).toEqual([deep(1), deep(32), 'top'].sort());
    expect(served.warnings).toEqual([
      `did not read 1 folder more than 32 levels below ${root}, the first ${level(33).slice(root.length + 1)}: ` +
        'raise limits.docsDepth in tack.json to read deeper',
    ]);

    writeFileSync(join(level(33), 'late.md'), '# Too deep');
    writeFileSync(join(level(2), 'late.md'), '# Deep enough');
    await expect.poll(() => slugsOf(served.client), { timeout: 5000 }).toContain('d/d/late');
    await new Promise((resolve) => setTimeout(resolve, 300)); // an event for the deeper one is flushed by now
    expect((await slugsOf(served.client)).filter((slug) => slug.endsWith('/late'))).toEqual(['d/d/late']);
  });

  it('indexes at most docsFiles documents, saying so, and holds the cap while watching', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    mkdirSync(root);
    for (const name of ['a', 'b', 'c', 'd', 'e']) writeFileSync(join(root, `${name}.md`), `# Doc ${name}`);
    await using served = await serveFolder(root, { docsFiles: 3 });
    expect(await slugsOf(served.client)).toEqual(['a', 'b', 'c']);
    expect(served.warnings).toEqual([
      `stopped indexing ${root} at 3 documents, the cap; the rest are not served: raise limits.docsFiles in tack.json to index more`,
    ]);

    writeFileSync(join(root, 'new.md'), '# New');
    await expect
      .poll(() => served.warnings, { timeout: 5000 })
      .toContain(
        `did not index ${join(root, 'new.md')}: the folder has 3 documents indexed, the cap; raise limits.docsFiles in tack.json to index more`,
      );
    expect(await slugsOf(served.client)).toEqual(['a', 'b', 'c']);
    rmSync(join(root, 'a.md'));
    await expect.poll(() => slugsOf(served.client), { timeout: 5000 }).toEqual(['b', 'c']);
    writeFileSync(join(root, 'new.md'), '# New, with room now');
    await expect.poll(() => slugsOf(served.client), { timeout: 5000 }).toEqual(['b', 'c', 'new']);
  });

  it('stops indexing at docsTotalBytes, saying where, and holds the total while watching', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    mkdirSync(root);
    for (const name of ['a', 'b', 'c'])
      writeFileSync(join(root, `${name}.md`), `# Doc ${name}\n\n${'y'.repeat(11)}`); // 20 bytes
    await using served = await serveFolder(root, { docsTotalBytes: 50 });
    expect(await slugsOf(served.client)).toEqual(['a', 'b']);
    expect(served.warnings).toEqual([
      `stopped indexing ${root} at 2 documents (40 bytes): the next, ${join(root, 'c.md')}, would take them past ` +
        '50 bytes in all, the cap; the rest are not served: raise limits.docsTotalBytes in tack.json to index more',
    ]);

    writeFileSync(join(root, 'b.md'), `# Doc b\n\n${'y'.repeat(31)}`); // 40 bytes: 60 in all
    await expect.poll(() => slugsOf(served.client), { timeout: 5000 }).toEqual(['a']);
    expect(served.warnings).toContain(
      `did not index ${join(root, 'b.md')}: it would take the documents past 50 bytes in all, the cap; ` +
        'raise limits.docsTotalBytes in tack.json to index more',
    );
  });

  it('answers read_doc and doc:// reads of a large document with a bounded text that says what was cut', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    mkdirSync(root);
    const words = 300_000;
    writeFileSync(join(root, 'big.md'), `# Big\n\n${'lorem '.repeat(words)}`); // 1.8 M characters
    writeFileSync(join(root, 'one-word.md'), 'x'.repeat(1_500_000));
    await using served = await serveFolder(root, {});
    const { client } = served;

    const start = await client.callTool({ name: 'read_doc', arguments: { slug: 'big', max_words: 10 } });
    expect(textOf(start)).toBe(
      `# Big\n\n${'lorem '.repeat(8).trim()}\n\n[${words + 2 - 10} more words: read_doc with a larger max_words, or doc://big]`,
    );
    const full = await client.readResource({ uri: 'doc://big' });
    const text = (full.contents[0] as { text: string }).text;
    expect(text.length).toBeLessThan(MAX_DOC_CHARS + 200);
    expect(text).toMatch(
      /\n\n\[cut: this document is 1,800,007 characters; doc:\/\/ returns the first [\d,]+ of them\]$/,
    );

    // One "word" of 1.5 M characters: max_words cannot bound it, the character cap does.
    const word = await client.callTool({ name: 'read_doc', arguments: { slug: 'one-word', max_words: 1 } });
    expect(textOf(word)).toBe(
      `# one-word\n\n${'x'.repeat(MAX_DOC_CHARS)}\n\n[cut at 1,048,576 characters, the most read_doc returns]`,
    );
  });
});

describe('reading one document within its cap', () => {
  it('refuses a file over maxBytes by its size (LIMIT_EXCEEDED, naming it), and a FIFO without blocking', async () => {
    using project = tempProject();
    const file = join(project.dir, 'big.md');
    writeFileSync(file, 'z'.repeat(2000));
    await expect(readDoc(project.dir, file, { maxBytes: 1999 })).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      subject: { file },
      message: `${file}: 2,000 bytes, over the 1,999 bytes cap on one document`,
      hint: 'Raise limits.docsFileBytes in tack.json to serve it.',
    });
    expect((await readDoc(project.dir, file, { maxBytes: 2000 })).bytes).toBe(2000);
    const fifo = join(project.dir, 'pipe.md');
    try {
      execFileSync('mkfifo', [fifo]);
    } catch {
      return; // no mkfifo here (Windows)
    }
    await expect(readDoc(project.dir, fifo)).rejects.toThrow(/not a regular file/);
  });

  it('cuts at a word count without scanning past it, and at a character cap', () => {
    expect(firstWords('one two three four', 2, { words: 4 })).toEqual({ text: 'one two', rest: 2 });
    // With the count given, the rest is not counted: a wrong count shows it was not.
    expect(firstWords('one two three four', 2, { words: 100 })).toEqual({ text: 'one two', rest: 98 });
    expect(firstWords('abcdef ghi', 5, { maxChars: 4 })).toEqual({ text: 'abcd', rest: 1, cut: true });
    expect(firstWords('ab cd ef', 5, { maxChars: 6 })).toEqual({ text: 'ab cd', rest: 1, cut: true });
    expect(firstWords('ab cd    ', 5, { maxChars: 6 })).toEqual({ text: 'ab cd', rest: 0 });
  });
});
