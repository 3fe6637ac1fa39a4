import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditRow } from '../../src/store/audit.js';
import { AuditSpool, MAX_SPOOL_BYTES, SPOOL_STALE_MS } from '../../src/store/postgres/audit-spool.js';
import { deadPid } from '../helpers/processes.js';
import { tempProject } from '../helpers/project.js';

const row = (n: number): AuditRow => [
  new Date(1_700_000_000_000 + n).toISOString(),
  'spool-test',
  'fx',
  'echo',
  n.toString(16).padStart(64, '0'),
  1,
  'ok',
  null,
];

/** The digests of `rows`, as numbers: which rows arrived, and how often. */
const numbers = (rows: AuditRow[]) => rows.map((r) => Number.parseInt(r[4], 16));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** Whether this process may mount a small tmpfs (root, with the capability): a real full disk for one test. */
function canMountTmpfs(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = mkdtempSync(join(tmpdir(), 'tack-mount-'));
  try {
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe]).status !== 0) return false;
    spawnSync('umount', [probe]);
    return true;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** The audit table, as the replay sees it: rows in the order written; fails while `failing()` says so. */
function table(failing: () => boolean = () => false) {
  const rows: AuditRow[] = [];
  return {
    rows,
    insert: async (batch: AuditRow[]) => {
      if (failing()) throw new Error('connection refused');
      for (const r of batch) rows.push(r);
    },
  };
}

describe('the local audit spool', () => {
  it('keeps rows across files and writes each exactly once, then the folder is empty', async () => {
    using project = tempProject();
    const spool = new AuditSpool(join(project.dir, 'spool'));
    expect(spool.pending()).toBe(false);
    expect(spool.keep(range(0, 700).map(row))).toBe(true);
    const db = table();
    let outcome = await spool.replay(db.insert, () => false);
    expect(outcome).toEqual({ written: 700, skipped: 0, unreadable: [] });
    // Rows kept after a replay go to a new file; a second replay writes only those.
    spool.keep([row(700)]);
    outcome = await spool.replay(db.insert, () => false);
    expect(outcome.written).toBe(1);
    expect(numbers(db.rows)).toEqual(range(0, 701));
    expect(readdirSync(join(project.dir, 'spool'))).toEqual([]);
    expect(spool.bytes).toBe(0);
    spool.close();
  });

  it('a failure mid-replay puts the rest back and throws; the next replay writes it with no duplicate', async () => {
    using project = tempProject();
    const spool = new AuditSpool(join(project.dir, 'spool'));
    spool.keep(range(0, 1_200).map(row));
    let calls = 0;
    const db = table(() => ++calls === 2); // the second batch of 500 fails
    await expect(spool.replay(db.insert, () => false)).rejects.toThrow('connection refused');
    expect(db.rows).toHaveLength(500);
    expect(spool.pending()).toBe(true);
    expect(await spool.replay(db.insert, () => false)).toMatchObject({ written: 700, skipped: 0 });
    expect(numbers(db.rows).sort((a, b) => a - b)).toEqual(range(0, 1_200));
    spool.close();
  });

  it('a file cut by failure after failure keeps a name of bounded length, and every row arrives', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    const spool = new AuditSpool(dir);
    spool.keep(range(0, 30 * 500).map(row));
    let calls = 0;
    const db = table(() => ++calls % 2 === 0); // the database fails every second batch: each replay writes one
    for (let replay = 0; replay < 29; replay++)
      await expect(spool.replay(db.insert, () => false)).rejects.toThrow('connection refused');
    for (const name of readdirSync(dir)) expect(name.length).toBeLessThan(80);
    await spool.replay(db.insert, () => false);
    expect(numbers(db.rows).sort((a, b) => a - b)).toEqual(range(0, 30 * 500));
    expect(readdirSync(dir)).toEqual([]);
    spool.close();
  });

  it('stops between batches when asked (a store closing), leaving the rest for later', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    const spool = new AuditSpool(dir);
    spool.keep(range(0, 1_500).map(row));
    const db = table();
    let batches = 0;
    await expect(
      spool.replay(
        async (rows) => {
          batches++;
          await db.insert(rows);
        },
        () => batches >= 1,
      ),
    ).rejects.toThrow(/closed/);
    expect(db.rows).toHaveLength(500);
    spool.close();
    // A later store on the folder (this process, another spool) takes the closed one's rows.
    const next = new AuditSpool(dir);
    expect(await next.replay(db.insert, () => false)).toMatchObject({ written: 1_000 });
    expect(numbers(db.rows).sort((a, b) => a - b)).toEqual(range(0, 1_500));
    next.close();
  });

  it("takes a dead writer's file and skips its cut line; leaves a live process's file alone", async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    const dead = deadPid();
    const orphan = join(dir, `${dead}-aaaaaaaaaaaa-0.jsonl`);
    writeFileSync(orphan, `${JSON.stringify(row(1))}\n${JSON.stringify(row(2))}\n["cut sh`);
    appendFileSync(orphan, '\n{"not":"a row"}\n');
    // A claim left by a replayer that died is taken too.
    writeFileSync(join(dir, `x-0.replaying-${dead}-bbbbbbbbbbbb`), `${JSON.stringify(row(3))}\n`);
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const liveFile = join(dir, `${sleeper.pid}-cccccccccccc-0.jsonl`);
      writeFileSync(liveFile, `${JSON.stringify(row(4))}\n`);
      const spool = new AuditSpool(dir);
      const db = table();
      expect(await spool.replay(db.insert, () => false)).toEqual({
        written: 3,
        skipped: 2,
        unreadable: [],
      });
      expect(numbers(db.rows).sort()).toEqual([1, 2, 3]);
      expect(existsSync(orphan)).toBe(false);
      expect(readFileSync(liveFile, 'utf8')).toContain(row(4)[4]);
      spool.close();
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a failed replay never drops rows already on disk, even with its own spool nearly full', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    // A dead instance left 40 MiB; this one holds 30 MiB of its own; the database is still down.
    const big = (n: number): AuditRow => {
      const r = row(n);
      r[7] = 'x'.repeat(1024 * 1024);
      return r;
    };
    const orphan = join(dir, `${deadPid()}-aaaaaaaaaaaa-0.jsonl`);
    writeFileSync(
      orphan,
      range(0, 40)
        .map((n) => `${JSON.stringify(big(n))}\n`)
        .join(''),
    );
    const spool = new AuditSpool(dir);
    expect(spool.keep(range(40, 70).map(big))).toBe(true);
    let down = true;
    const db = table(() => down);
    for (let retry = 0; retry < 3; retry++)
      await expect(spool.replay(db.insert, () => false)).rejects.toThrow('connection refused');
    down = false;
    await spool.replay(db.insert, () => false);
    expect(numbers(db.rows).sort((a, b) => a - b)).toEqual(range(0, 70));
    expect(readdirSync(dir)).toEqual([]);
    expect(spool.bytes).toBe(0);
    spool.close();
  });

  it('a replay that fails at its first batch leaves the file as it was (a retry during an outage is cheap)', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    const orphan = join(dir, `${deadPid()}-aaaaaaaaaaaa-0.jsonl`);
    writeFileSync(
      orphan,
      range(0, 2_000)
        .map((n) => `${JSON.stringify(row(n))}\n`)
        .join(''),
    );
    const before = statSync(orphan);
    const spool = new AuditSpool(dir);
    const db = table(() => true);
    await expect(spool.replay(db.insert, () => false)).rejects.toThrow('connection refused');
    // Not read to its end and written again (64 MiB every 5 s through a long outage): the same file, untouched.
    const after = statSync(orphan);
    expect([after.ino, after.size]).toEqual([before.ino, before.size]);
    expect(Math.abs(after.mtimeMs - before.mtimeMs)).toBeLessThan(1); // its age as it was (to the ms)
    expect(readdirSync(dir)).toEqual([orphan.slice(dir.length + 1)]);
    expect(spool.bytes).toBe(0);
    spool.close();
  });

  it('rows kept after close (the INSERT under way failed as the store closed) are never written into a taken file', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    const closing = new AuditSpool(dir);
    closing.close();
    // PostgresStore.close closes the spool, then the pool: the batch under way fails then, and is kept.
    expect(closing.keep([row(1)])).toBe(true);
    // The next store on the folder (a reload in this process) takes the closed store's file meanwhile...
    const next = new AuditSpool(dir);
    const db = table();
    await next.replay(db.insert, () => false);
    // ...and the closed store keeps the next failed batch: it must land in a file still there.
    expect(closing.keep([row(2)])).toBe(true);
    await next.replay(db.insert, () => false);
    expect(numbers(db.rows)).toEqual([1, 2]);
    expect(readdirSync(dir)).toEqual([]);
    next.close();
  });

  // A full disk cuts an append short; rows kept once there is room again must not be glued to the cut line.
  it.skipIf(!canMountTmpfs())(
    'a row kept after a disk-full append is not lost to the line that append cut',
    async () => {
      using project = tempProject();
      const dir = join(project.dir, 'small');
      mkdirSync(dir);
      spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
      try {
        const spool = new AuditSpool(join(dir, 'spool'));
        expect(spool.keep([row(1)])).toBe(true);
        const filler = join(dir, 'filler');
        writeFileSync(filler, Buffer.alloc(40 * 1024));
        const big: AuditRow = [...row(2)];
        big[7] = 'x'.repeat(60 * 1024);
        expect(spool.keep([big])).toBe(false); // no room: refused (part of it written)
        rmSync(filler);
        expect(spool.keep([row(3)])).toBe(true);
        const db = table();
        await spool.replay(db.insert, () => false);
        expect(numbers(db.rows)).toEqual([1, 3]);
        spool.close();
      } finally {
        spawnSync('umount', [dir]);
      }
    },
  );

  it('follows no symlink and opens no directory named like a spool file', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    const dead = deadPid();
    // Rows elsewhere (another tool's file, another state folder): not this spool's to write or to remove.
    const elsewhere = join(project.dir, 'elsewhere.jsonl');
    writeFileSync(elsewhere, `${JSON.stringify(row(1))}\n`);
    symlinkSync(elsewhere, join(dir, `${dead}-aaaaaaaaaaaa-0.jsonl`));
    mkdirSync(join(dir, `${dead}-bbbbbbbbbbbb-0.jsonl`));
    const spool = new AuditSpool(dir);
    expect(spool.pending()).toBe(false);
    const db = table();
    expect(await spool.replay(db.insert, () => false)).toEqual({ written: 0, skipped: 0, unreadable: [] });
    expect(db.rows).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual([`${dead}-aaaaaaaaaaaa-0.jsonl`, `${dead}-bbbbbbbbbbbb-0.jsonl`]);
    spool.close();
  });

  // Containers sharing a state volume: each tack may run as the same pid (1, say) in its own pid namespace, where
  // another's pid says nothing about it. A live writer's file must not be taken (its next rows would go into a file
  // removed under it); one left idle past SPOOL_STALE_MS is (writers start a new file after a minute idle).
  it("takes no fresh file of a writer in another pid namespace, even with this process's pid", async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    // What the other container's tack writes: this pid, and an id that names another machine or pid namespace.
    const name = `${process.pid}-ffffffff${'0'.repeat(12)}-0.jsonl`;
    writeFileSync(join(dir, name), `${JSON.stringify(row(1))}\n`);
    const spool = new AuditSpool(dir);
    const db = table();
    await spool.replay(db.insert, () => false);
    expect(db.rows).toEqual([]);
    expect(readdirSync(dir)).toEqual([name]);
    // Idle for longer than a writer keeps a file open: its writer is gone, or writes a new file. Taken.
    const old = (Date.now() - SPOOL_STALE_MS - 60_000) / 1000;
    utimesSync(join(dir, name), old, old);
    await spool.replay(db.insert, () => false);
    expect(numbers(db.rows)).toEqual([1]);
    expect(readdirSync(dir)).toEqual([]);
    spool.close();
  });

  it('a quiet store looks again when a file it left alone turns stale (a container restarted on its volume)', () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    const name = `1-ffffffff${'0'.repeat(12)}-0.jsonl`;
    writeFileSync(join(dir, name), `${JSON.stringify(row(1))}\n`);
    const spool = new AuditSpool(dir);
    expect(spool.pending()).toBe(false);
    const mtime = statSync(join(dir, name)).mtimeMs;
    expect(spool.nextLook).toBe(mtime + SPOOL_STALE_MS);
    // The same store, with nothing spooled of its own since: once the file is stale, it is pending.
    const old = (Date.now() - SPOOL_STALE_MS - 60_000) / 1000;
    utimesSync(join(dir, name), old, old);
    expect(spool.pending()).toBe(false); // its next look is not due yet: no folder read per batch
    expect(spool.nextLook).toBe(mtime + SPOOL_STALE_MS);
    const clock = Date.now;
    Date.now = () => mtime + SPOOL_STALE_MS + 1;
    try {
      expect(spool.pending()).toBe(true);
    } finally {
      Date.now = clock;
    }
    spool.close();
  });

  it("takes an orphan whose writer's pid now belongs to another process, once the file is stale", async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    // The writer died and its pid went to an unrelated long-lived process (here: a sleeper).
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const name = `${sleeper.pid}-cccccccccccc-0.jsonl`;
      writeFileSync(join(dir, name), `${JSON.stringify(row(7))}\n`);
      const old = (Date.now() - SPOOL_STALE_MS - 60_000) / 1000;
      utimesSync(join(dir, name), old, old);
      const spool = new AuditSpool(dir);
      const db = table();
      await spool.replay(db.insert, () => false);
      expect(numbers(db.rows)).toEqual([7]);
      spool.close();
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a writer whose files another instance took accepts rows again up to its bound', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'spool');
    const spool = new AuditSpool(dir);
    const big: AuditRow = [...row(0)];
    big[7] = 'x'.repeat(1024 * 1024);
    while (spool.keep([big])) {}
    while (spool.keep([row(2)])) {}
    // Another container's replay took them (idle past SPOOL_STALE_MS) and wrote them: the count must not stay full.
    for (const name of readdirSync(dir)) rmSync(join(dir, name));
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the folder is read again once a second at most
    expect(spool.keep([row(1)])).toBe(true);
    spool.close();
  });

  it('refuses rows past its bound instead of filling the disk', () => {
    using project = tempProject();
    const spool = new AuditSpool(join(project.dir, 'spool'));
    const big: AuditRow = [...row(0)];
    big[7] = 'x'.repeat(1024 * 1024);
    let kept = 0;
    while (spool.keep([big])) kept++;
    expect(kept).toBe(Math.floor(MAX_SPOOL_BYTES / (JSON.stringify(big).length + 1)));
    expect(spool.bytes).toBeLessThanOrEqual(MAX_SPOOL_BYTES);
    expect(spool.keep([row(1)])).toBe(true); // a small row still fits in what is left
    spool.close();
  });
});
