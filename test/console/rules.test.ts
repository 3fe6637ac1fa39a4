import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type LivenessProbe,
  processAlive,
  QUIET_MS,
  sessionLiveness,
  transcriptFacts,
} from '../../src/console/liveness.js';
import { labelsToShow } from '../../web/src/labels.js';
import { cutAtWord } from '../../web/src/text.js';

const temp = mkdtempSync(join(tmpdir(), 'tack-console-rules-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('cutAtWord', () => {
  it('keeps text that fits whole', () => {
    expect(cutAtWord('Short enough.', 20)).toEqual({ text: 'Short enough.', cut: false });
    expect(cutAtWord('x'.repeat(20), 20)).toEqual({ text: 'x'.repeat(20), cut: false });
  });

  it('cuts at the last word boundary, drops trailing punctuation and ends with an ellipsis', () => {
    const text = 'Extract text and tables from PDF files, fill forms, merge documents';
    const cut = cutAtWord(text, 42);
    expect(cut).toEqual({ text: 'Extract text and tables from PDF files…', cut: true });
    expect(cut.text.length).toBeLessThanOrEqual(42);
    // Never mid-word: what is kept is a prefix of the text followed by a space there.
    const kept = cut.text.slice(0, -1);
    expect(text.startsWith(kept)).toBe(true);
    expect(text.slice(kept.length)).toMatch(/^[\s,]/);
  });

  it('cuts inside a word only when one word would leave almost nothing', () => {
    const cut = cutAtWord(`a ${'b'.repeat(50)}`, 20);
    expect(cut.text).toBe(`a ${'b'.repeat(17)}…`);
    expect(cut.text.length).toBe(20);
  });

  it('never splits a surrogate pair', () => {
    const cut = cutAtWord('😀'.repeat(20), 10);
    expect(cut.cut).toBe(true);
    // Nine code units of room: four whole emoji, not four and a half.
    expect(cut.text).toBe(`${'😀'.repeat(4)}…`);
  });
});

describe('sessionLiveness', () => {
  const probe = (alive: boolean, now = 1_000_000_000): LivenessProbe => ({
    now,
    hostname: 'here',
    alive: () => alive,
  });

  it('a session the index or its transcript says ended is ended', () => {
    expect(sessionLiveness('completed', { ended: false }, probe(true))).toBe('ended');
    expect(sessionLiveness('running', { ended: true, pid: 1, hostname: 'here' }, probe(true))).toBe('ended');
  });

  it('a running session on this machine lives as long as its process', () => {
    expect(sessionLiveness('running', { ended: false, pid: 42, hostname: 'here' }, probe(true))).toBe('live');
    expect(sessionLiveness('running', { ended: false, pid: 42, hostname: 'here' }, probe(false))).toBe(
      'abandoned',
    );
  });

  it('without a process to ask (an older transcript, another machine) a long silence means abandoned', () => {
    const now = 1_000_000_000;
    const fresh = { ended: false, writtenAt: now - 1000 };
    const quiet = { ended: false, writtenAt: now - QUIET_MS - 1 };
    expect(sessionLiveness('running', fresh, probe(false, now))).toBe('live');
    expect(sessionLiveness('running', quiet, probe(true, now))).toBe('abandoned');
    // A pid from another machine says nothing here.
    expect(sessionLiveness('running', { ...fresh, pid: 42, hostname: 'elsewhere' }, probe(false, now))).toBe(
      'live',
    );
  });

  it('reads the last run from a transcript file, from its end', () => {
    const file = join(temp, 'a.jsonl');
    const line = (event: object) => JSON.stringify({ seq: 1, at: 'x', ...event });
    writeFileSync(
      file,
      [
        line({ type: 'session-start', pid: 1, hostname: 'old' }),
        line({ type: 'session-end', reason: 'completed' }),
        line({ type: 'session-start', pid: 7, hostname: 'h' }),
        line({ type: 'message', message: { role: 'user', content: '"type":"session-end"' } }),
        '{broken',
        '',
      ].join('\n'),
    );
    utimesSync(file, 1000, 1000);
    expect(transcriptFacts(file)).toEqual({ ended: false, pid: 7, hostname: 'h', writtenAt: 1_000_000 });
    writeFileSync(file, `${line({ type: 'session-start' })}\n${line({ type: 'session-end' })}\n`);
    expect(transcriptFacts(file)).toMatchObject({ ended: true });
    expect(transcriptFacts(join(temp, 'missing.jsonl'))).toEqual({ ended: false });
  });

  it('asks the real process table', async () => {
    expect(processAlive(process.pid)).toBe(true);
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid!;
    await new Promise((resolve) => child.once('exit', resolve));
    expect(processAlive(pid)).toBe(false);
    expect(hostname()).toBeTruthy();
  });
});

describe('labelsToShow', () => {
  const box = (x: number, y: number, w = 40, h = 10) => ({ x1: x, y1: y, x2: x + w, y2: y + h });
  const node = (id: string, x: number, y: number, rank: number) => ({
    id,
    body: box(x + 13, y - 14, 14, 14),
    label: box(x, y),
    rank,
  });

  it('keeps the best-ranked of overlapping labels and every label that overlaps nothing', () => {
    const shown = labelsToShow([node('hub', 0, 0, 5), node('leaf', 30, 6, 1), node('far', 200, 200, 0)]);
    expect([...shown].sort()).toEqual(['far', 'hub']);
  });

  it('leaves out a label drawn over another node', () => {
    const shown = labelsToShow([
      { id: 'a', label: box(0, 0, 100, 10), body: box(40, -20, 14, 14), rank: 1 },
      { id: 'b', label: box(0, 100), body: box(30, 2, 14, 14), rank: 0 },
    ]);
    expect([...shown]).toEqual(['b']);
  });

  it('no two labels shown overlap, whatever the layout', () => {
    const nodes = Array.from({ length: 60 }, (_, i) => node(`n${i}`, (i * 37) % 200, (i * 53) % 120, i % 7));
    const shown = nodes.filter((n) => labelsToShow(nodes).has(n.id));
    expect(shown.length).toBeGreaterThan(3);
    for (const a of shown)
      for (const b of shown)
        if (a !== b)
          expect(
            a.label.x1 < b.label.x2 &&
              b.label.x1 < a.label.x2 &&
              a.label.y1 < b.label.y2 &&
              b.label.y1 < a.label.y2,
          ).toBe(false);
  });
});
