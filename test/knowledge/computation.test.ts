import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TackError } from '../../src/errors.js';
import { sameValue } from '../../src/knowledge/attest/attesters.js';
import {
  type ComputationExecutor,
  type ExecuteRequest,
  type Receipt,
  ReceiptLog,
} from '../../src/knowledge/attest/executors.js';
import { checkParameters } from '../../src/knowledge/attest/parameters.js';
import { postgresExecutor } from '../../src/knowledge/attest/postgres.js';
import {
  attest,
  type ComputationOutcome,
  formatOutcome,
  requireAttested,
  runComputation,
} from '../../src/knowledge/attest/run.js';
import {
  bindParameters,
  canonicalSql,
  canonicalSqlTokens,
  describeSqlDifference,
} from '../../src/knowledge/attest/sql.js';
import { sqliteExecutor } from '../../src/knowledge/attest/sqlite.js';
import type { ComputationContract } from '../../src/knowledge/computation.js';
import { type Concept, parseConcept } from '../../src/knowledge/concept.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { REPO } from '../helpers/project.js';

const BUNDLE = join(REPO, 'test', 'fixtures', 'okf', 'shop');
const DATA = readFileSync(join(REPO, 'test', 'fixtures', 'okf', 'shop-data.sql'), 'utf8');

/** The orders as inserted, read from the SQL text itself: the expected figures never come from a database. */
const ORDERS = [
  ...DATA.matchAll(/\((\d+), '([^']*)', '(\d{4}-\d{2}-\d{2})', '(\w+)', '(\w+)', (\d+)\.(\d{2})\)/g),
].map((m) => ({
  id: Number(m[1]),
  orderedOn: m[3]!,
  status: m[4]!,
  currency: m[5]!,
  cents: Number(m[6]) * 100 + Number(m[7]),
}));

const delivered = (filter: (o: (typeof ORDERS)[number]) => boolean) =>
  ORDERS.filter((o) => o.status === 'delivered' && filter(o));
const eurInYear = (year: number) =>
  delivered((o) => o.currency === 'EUR' && o.orderedOn.startsWith(`${year}-`));
const sumCents = (orders: typeof ORDERS) => orders.reduce((s, o) => s + o.cents, 0);
/** Exact decimal text of a cent amount, as PostgreSQL prints NUMERIC(12, 2). */
const decimal = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

function load(path: string): Concept {
  const { concept, issues } = parseConcept(path, readFileSync(join(BUNDLE, path), 'utf8'));
  expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
  return concept!;
}

function adhoc(path: string, frontMatter: string, sql: string): Concept {
  const { concept } = parseConcept(
    path,
    `---\ntype: Attested Computation\n${frontMatter}\n---\n\n# Computation\n\n\`\`\`sql\n${sql}\n\`\`\`\n`,
  );
  return concept!;
}

const attested = (outcome: ComputationOutcome) => {
  if (outcome.status !== 'attested') throw new Error(`expected attested, got refused: ${outcome.reason}`);
  return outcome;
};
const refused = (outcome: ComputationOutcome) => {
  if (outcome.status !== 'refused')
    throw new Error(`expected refused, got attested: ${outcome.verdict.reason}`);
  return outcome;
};
const copy = (receipt: Receipt): Receipt => structuredClone(receipt) as Receipt;

/** An executor between the model and the real one that edits the sanctioned SQL before running it. */
function rewriting(inner: ComputationExecutor, edit: (sql: string) => string): ComputationExecutor {
  return {
    runtime: inner.runtime,
    ...(inner.log ? { log: inner.log } : {}),
    execute: (request: ExecuteRequest) => inner.execute({ ...request, sql: edit(request.sql) }),
  };
}

describe('fixture data', () => {
  it('holds the rows the expectations are computed from', () => {
    expect(ORDERS).toHaveLength(16);
    expect(eurInYear(2026).length).toBeGreaterThan(3);
    expect(eurInYear(2025).length).toBeGreaterThan(1);
  });
});

describe('canonicalSql', () => {
  it('strips comments, collapses whitespace, folds case and drops a trailing semicolon', () => {
    const a = `select sum(amount)   -- the total\n  from orders /* all of them */ where year =\n @year;`;
    const b = 'SELECT SUM ( amount ) FROM Orders WHERE YEAR = @year';
    expect(canonicalSql(a)).toBe('SELECT SUM ( AMOUNT ) FROM ORDERS WHERE YEAR = @year');
    expect(canonicalSql(a)).toBe(canonicalSql(b));
    expect(canonicalSql(canonicalSql(a))).toBe(canonicalSql(a));
  });

  it('keeps string literals and quoted identifiers byte for byte', () => {
    expect(canonicalSql("select 'Delivered'")).not.toBe(canonicalSql("select 'delivered'"));
    expect(canonicalSql("select  'a  b'")).toBe("SELECT 'a  b'");
    expect(canonicalSql(`select "Order Total", \`Mixed\` from t`)).toBe(
      'SELECT "Order Total" , `Mixed` FROM T',
    );
    // Comment markers inside a literal are text, and '' is an escaped quote, not the end.
    expect(canonicalSql("select 'it''s -- not /* a comment */' from t")).toBe(
      "SELECT 'it''s -- not /* a comment */' FROM T",
    );
    expect(canonicalSql("select E'a\\' -- b' as x")).toBe("SELECT E'a\\' -- b' AS X");
    expect(canonicalSql('select $q$ -- kept $q$')).toBe('SELECT $q$ -- kept $q$');
  });

  it('keeps apart what only looks alike once spaces go', () => {
    expect(canonicalSql('select 1.5')).not.toBe(canonicalSql('select 1 . 5'));
    expect(canonicalSql('where a <= 1')).not.toBe(canonicalSql('where a < = 1'));
    expect(canonicalSql("select x'0A'")).not.toBe(canonicalSql("select x '0A'"));
    expect(canonicalSql('select @Year')).not.toBe(canonicalSql('select @year'));
    expect(canonicalSql('select a - -1')).not.toBe(canonicalSql('select a --1'));
  });

  it('takes only the whitespace SQL servers skip for whitespace', () => {
    // PostgreSQL and SQLite read a no-break space (and other non-ASCII spaces) as part of an identifier.
    for (const space of ['\u00a0', '\u2028', '\u3000', '\ufeff'])
      expect(canonicalSql(`select a,${space}b from t`), JSON.stringify(space)).not.toBe(
        canonicalSql('select a, b from t'),
      );
    expect(canonicalSql('select\ta\r\nfrom\x0bt\x0c')).toBe('SELECT A FROM T');
    // A comment ended by CRLF is no different from one ended by LF.
    expect(canonicalSql('select a -- note\r\nfrom t')).toBe('SELECT A FROM T');
  });

  it('names the first differing token', () => {
    const expected = canonicalSqlTokens("SELECT SUM(x) FROM t WHERE s = 'delivered' AND y = @year");
    const actual = canonicalSqlTokens('SELECT SUM(x) FROM t WHERE y = @year');
    expect(describeSqlDifference(expected, actual)).toMatch(/differs at token 9 .*expected `S = 'delivered'/);
    expect(describeSqlDifference(expected, expected)).toBeUndefined();
    expect(describeSqlDifference(expected, [...expected, 'OR', '1'])).toMatch(/extra tokens.*`OR 1`/);
  });
});

describe('bindParameters', () => {
  const sql = 'select @a, \'@a\', "@b", @b /* @a */ -- @a\n, @a, @@version';

  it('keeps @name for named drivers and lists the names in order', () => {
    expect(bindParameters(sql, ['a', 'b'], 'named')).toEqual({ sql, order: ['a', 'b'] });
  });

  it('numbers each distinct name for PostgreSQL, outside literals, comments and quoted identifiers', () => {
    expect(bindParameters(sql, ['a', 'b'], 'positional-dollar')).toEqual({
      sql: 'select $1, \'@a\', "@b", $2 /* @a */ -- @a\n, $1, @@version',
      order: ['a', 'b'],
    });
  });

  it('refuses a hole that is not a declared parameter', () => {
    expect(() => bindParameters('select @a, @c', ['a'], 'named')).toThrow(
      /@c, which is not a declared parameter/,
    );
    expect(() => bindParameters('select $1', [], 'positional-dollar')).toThrow(/placeholder \$1/);
  });
});

describe('checkParameters', () => {
  const contract: ComputationContract = {
    runtime: 'sqlite',
    parameters: [
      { name: 'year', type: 'integer', required: true },
      { name: 'start', type: 'date', required: false },
      { name: 'at', type: 'timestamp', required: false },
      { name: 'rate', type: 'number', required: false },
      { name: 'flag', type: 'boolean', required: false },
    ],
  };
  const input = (values: Record<string, unknown>) => () => checkParameters(contract, values, 'c.md');

  it('returns typed values, optional ones left out as null', () => {
    expect(
      checkParameters(contract, { year: 2026, start: '2024-02-29', at: '2026-06-30T14:00:00+02:00' }),
    ).toEqual({ year: 2026, start: '2024-02-29', at: '2026-06-30T14:00:00+02:00', rate: null, flag: null });
  });

  it('is strict about types, and says what to pass', () => {
    expect(input({ year: '2026' })).toThrow(/"year" must be an integer .*got the string "2026"/);
    expect(input({ year: 2026.5 })).toThrow(/"year" must be an integer/);
    expect(input({ year: 2026, start: '2026-02-30' })).toThrow(/"start" must be a calendar date/);
    expect(input({ year: 2026, start: '2026-2-3' })).toThrow(/"start" must be a calendar date/);
    expect(input({ year: 2026, at: '2026-06-30T14:00:00' })).toThrow(/"at" must be an ISO 8601 datetime/);
    expect(input({ year: 2026, at: '2026-06-30T24:00:00Z' })).toThrow(/"at" must be/);
    expect(input({ year: 2026, rate: Number.NaN })).toThrow(/"rate" must be a finite number/);
    expect(input({ year: 2026, flag: 'true' })).toThrow(/"flag" must be true or false/);
    try {
      input({ year: '2026' })();
    } catch (error) {
      expect((error as TackError).code).toBe('COMPUTATION_INPUT');
      expect((error as TackError).subject).toEqual({ file: 'c.md', path: 'parameters.year' });
      expect((error as TackError).hint).toMatch(/\{"year": 2026\}/);
    }
  });

  it('refuses unknown names and missing required values', () => {
    expect(input({ year: 2026, yeer: 1 })).toThrow(
      /unknown parameter "yeer": this computation declares year: /,
    );
    expect(input({})).toThrow(/missing required parameter "year" \(integer\)/);
    expect(input({ year: null })).toThrow(/missing required parameter "year"/);
  });
});

describe('fidelity comparison', () => {
  it('compares numbers and numeric strings as numbers, everything else exactly', () => {
    expect(sameValue(['1690.78', '7'], [1690.78, 7])).toBe(true);
    expect(sameValue('1234.50', 1234.5)).toBe(true);
    expect(sameValue('1234.51', 1234.5)).toBe(false);
    expect(sameValue('EUR', 'eur')).toBe(false);
    expect(sameValue([1, 2], [1, 2, 3])).toBe(false);
    expect(sameValue(null, 0)).toBe(false);
  });
});

describe('attested computations on SQLite', () => {
  let dir: string;
  let file: string;
  let log: ReceiptLog;
  let sqlite: ReturnType<typeof sqliteExecutor>;
  const revenue = load('computations/revenue-year-sqlite.md');
  const period = load('computations/revenue-period.md');
  const average = load('computations/average-order-value.md');
  const run = (
    concept: Concept,
    values: Record<string, unknown>,
    extra: { claimed?: unknown; now?: number } = {},
  ) => runComputation({ bundleRoot: BUNDLE, concept, values, executors: [sqlite], ...extra });
  const countOrders = () => {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM orders').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tack-computation-'));
    file = join(dir, 'shop.db');
    const db = new Database(file);
    db.exec(DATA);
    db.close();
    log = new ReceiptLog();
    sqlite = sqliteExecutor({ database: file, log });
  });
  afterAll(async () => {
    await sqlite?.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the sanctioned computation and attests the independently expected revenue', async () => {
    for (const year of [2025, 2026]) {
      const outcome = attested(await run(revenue, { year }));
      const expected = eurInYear(year);
      expect(outcome.receipt.result).toEqual([sumCents(expected) / 100, expected.length]);
      expect(outcome.receipt.columns).toEqual(['revenue', 'orders']);
      expect(outcome.receipt.job_id).toMatch(/^sqlite:[0-9a-f-]{36}$/);
      expect(outcome.receipt.executed_sql).toBe(revenue.computation!.inline!.text);
      expect(outcome.receipt.parameters).toEqual({ year });
      expect(outcome.stale).toBe(false);
      expect(outcome.warnings).toEqual([]);
      expect(outcome.attester).toBe('sql-equality (/references/attesters/sql-equality.md)');
      // The outcome carries the recorded copy, which nobody can edit afterwards.
      expect(outcome.receipt).toBe(log.get(outcome.receipt.job_id));
      expect(Object.isFrozen(outcome.receipt.result)).toBe(true);
    }
    const text = formatOutcome(attested(await run(revenue, { year: 2026 }, { claimed: 1690.78 })));
    expect(sumCents(eurInYear(2026))).toBe(169078);
    expect(text).toMatch(/^Revenue for a year \(computations\/revenue-year-sqlite\), attested:/);
    expect(text).toContain('revenue = 1690.78');
    expect(text).toMatch(/job sqlite:[0-9a-f-]+ \(sqlite\); attested by sql-equality .*with year=2026/);
    expect(text).toContain('the claimed value is the recorded result');
  });

  it('binds date and string parameters', async () => {
    const values = { period_start: '2026-01-01', period_end: '2026-03-31', currency: 'EUR' };
    const outcome = attested(await run(period, values));
    const expected = delivered(
      (o) => o.currency === 'EUR' && o.orderedOn >= values.period_start && o.orderedOn <= values.period_end,
    );
    expect(expected.length).toBeGreaterThan(1);
    expect(outcome.receipt.result).toEqual([sumCents(expected) / 100]);
    const usd = attested(await run(period, { ...values, period_end: '2026-12-31', currency: 'USD' }));
    expect(usd.receipt.result).toEqual([
      sumCents(delivered((o) => o.currency === 'USD' && o.orderedOn >= '2026')) / 100,
    ]);
  });

  it('attests a stale computation with a warning, and says so to the model', async () => {
    const expected = eurInYear(2026);
    const outcome = attested(await run(average, { year: 2026 }));
    expect(outcome.receipt.result).toEqual([Math.round(sumCents(expected) / expected.length) / 100]);
    expect(outcome.stale).toBe(true);
    expect(outcome.warnings).toEqual([expect.stringMatching(/^stale since 2026-01-01: /)]);
    expect(formatOutcome(outcome)).toMatch(/\nwarning: stale since 2026-01-01/);
    const before = attested(await run(average, { year: 2026 }, { now: Date.parse('2025-12-31T23:59:59Z') }));
    expect(before.stale).toBe(false);
    expect(before.warnings).toEqual([]);
  });

  it('warns about a deprecated computation', async () => {
    const outcome = attested(await run({ ...revenue, status: 'deprecated' }, { year: 2026 }));
    expect(outcome.warnings).toEqual([expect.stringMatching(/deprecated/)]);
  });

  it('refuses tampered receipts: an edited executed_sql, an edited result, an unknown job id', async () => {
    const good = attested(await run(revenue, { year: 2026 })).receipt;
    const check = (receipt: Receipt, claimed?: unknown) =>
      attest({ bundleRoot: BUNDLE, concept: revenue, receipt, values: { year: 2026 }, log, claimed });

    const droppedFilter = copy(good);
    droppedFilter.executed_sql = good.executed_sql.replace("AND o.currency = 'EUR'", '');
    expect(droppedFilter.executed_sql).not.toBe(good.executed_sql);
    const a = refused(await check(droppedFilter));
    expect(a.reason).toMatch(/^receipt tampered: .* in executed_sql$/);
    expect(a.rejectedReceipt).toBe(droppedFilter);
    expect('receipt' in a).toBe(false);

    const edited = copy(good);
    edited.result = [999999.99, 7];
    const b = refused(await check(edited, 999999.99));
    expect(b.reason).toMatch(/^receipt tampered: .* in result$/);
    const text = formatOutcome(b);
    expect(text).toMatch(/^REFUSED: .*did not attest: receipt tampered/);
    expect(text).toMatch(/Do not use, repeat or estimate any value from this run/);
    expect(text).not.toContain('999999');
    expect(text).not.toContain('1690');
    expect(() => requireAttested(b)).toThrow(/not attested: receipt tampered/);

    const unknown = copy(good);
    unknown.job_id = 'sqlite:00000000-0000-0000-0000-000000000000';
    expect(refused(await check(unknown)).reason).toMatch(
      /^receipt not found: job sqlite:0000.* is not in the receipt log/,
    );

    // The untouched receipt still attests, with the claimed value or its first cell.
    expect(attested(await check(copy(good), [1690.78, 7])).verdict.ok).toBe(true);
    expect(attested(await check(copy(good), '1690.78')).verdict.ok).toBe(true);
    expect(refused(await check(copy(good), 1690.79)).reason).toMatch(
      /^fidelity: the claimed value is not the result/,
    );
  });

  it('refuses a recorded run whose SQL is not the sanctioned one, naming the first difference', async () => {
    // A log that recorded a run of SQL with the currency filter dropped: the receipt is genuine, the SQL is not.
    const other = new ReceiptLog();
    const real = await sqliteExecutor({ database: file, log: other }).execute({
      conceptId: revenue.id,
      sql: revenue.computation!.inline!.text.replace("AND o.currency = 'EUR'", ''),
      parameters: revenue.computation!.parameters,
      values: { year: 2026 },
    });
    const outcome = refused(
      await attest({
        bundleRoot: BUNDLE,
        concept: revenue,
        receipt: real,
        values: { year: 2026 },
        log: other,
      }),
    );
    expect(outcome.reason).toMatch(
      /^provenance: job sqlite:.* did not run the sanctioned computation: the executed SQL differs at token \d+ .*expected `O \. CURRENCY = 'EUR'/,
    );
  });

  it('refuses a receipt for other values, or without a field the contract declares', async () => {
    const good = attested(await run(revenue, { year: 2026 })).receipt;
    const other = refused(
      await attest({
        bundleRoot: BUNDLE,
        concept: revenue,
        receipt: copy(good),
        values: { year: 2025 },
        log,
      }),
    );
    expect(other.reason).toBe(
      `parameters: job ${good.job_id} ran with year = 2026, but the supplied value is 2025`,
    );
    const wantsMore: Concept = {
      ...revenue,
      computation: {
        ...revenue.computation!,
        executor: {
          ...revenue.computation!.executor!,
          receipt: ['job_id', 'executed_sql', 'result', 'compiled_sql'],
        },
      },
    };
    const lacking = refused(
      await attest({
        bundleRoot: BUNDLE,
        concept: wantsMore,
        receipt: copy(good),
        values: { year: 2026 },
        log,
      }),
    );
    expect(lacking.reason).toMatch(/lacks the field\(s\) the contract declares: compiled_sql$/);
  });

  it('refuses an executor that runs rewritten SQL', async () => {
    const dropStatus = rewriting(sqlite, (sql) => sql.replace("o.status = 'delivered'\n  AND ", ''));
    const a = refused(
      await runComputation({
        bundleRoot: BUNDLE,
        concept: revenue,
        values: { year: 2026 },
        executors: [dropStatus],
      }),
    );
    expect(a.reason).toMatch(
      /^provenance: .*differs at token \d+ .*expected `STATUS = 'delivered' AND O \.`, found `CURRENCY = 'EUR'/,
    );
    expect(a.rejectedReceipt?.executed_sql).not.toContain("'delivered'");
    expect(formatOutcome(a)).not.toMatch(/revenue =/);

    // Writing the value into the text instead of binding it is a rewrite too.
    const inlined = rewriting(sqlite, (sql) => sql.replace('@year', '2026'));
    const b = refused(
      await runComputation({
        bundleRoot: BUNDLE,
        concept: revenue,
        values: { year: 2026 },
        executors: [inlined],
      }),
    );
    expect(b.reason).toMatch(/expected `@year`, found `2026`/);

    // An executor that runs the right SQL but hands back a better number is caught by the log.
    const inflating: ComputationExecutor = {
      runtime: 'sqlite',
      log,
      async execute(request) {
        const receipt = copy(await sqlite.execute(request));
        receipt.result = [1_000_000, 1];
        return receipt;
      },
    };
    const c = refused(
      await runComputation({
        bundleRoot: BUNDLE,
        concept: revenue,
        values: { year: 2026 },
        executors: [inflating],
      }),
    );
    expect(c.reason).toMatch(/^receipt tampered: .* in result$/);
  });

  it('never lets a parameter value into the SQL', async () => {
    await expect(run(revenue, { year: '2026; DROP TABLE orders' })).rejects.toMatchObject({
      code: 'COMPUTATION_INPUT',
      message: expect.stringMatching(/"year" must be an integer/),
    });
    await expect(
      run(period, {
        period_start: "2026-01-01'; DROP TABLE orders; --",
        period_end: '2026-12-31',
        currency: 'EUR',
      }),
    ).rejects.toMatchObject({ code: 'COMPUTATION_INPUT', message: expect.stringMatching(/"period_start"/) });

    // A string parameter is bound as a value: these match no currency, rather than every row or a second statement.
    const values = { period_start: '2020-01-01', period_end: '2030-12-31' };
    for (const currency of ["EUR'; DROP TABLE orders; --", "EUR' OR '1'='1"]) {
      const outcome = attested(await run(period, { ...values, currency }));
      expect(outcome.receipt.result).toEqual([null]);
      expect(outcome.receipt.parameters.currency).toBe(currency);
    }
    expect(countOrders()).toBe(ORDERS.length);
  });

  it('says clearly what is wrong with the values', async () => {
    await expect(run(revenue, {})).rejects.toMatchObject({
      code: 'COMPUTATION_INPUT',
      message: 'missing required parameter "year" (integer)',
    });
    await expect(run(revenue, { year: 2026, yeer: 2026 })).rejects.toMatchObject({
      code: 'COMPUTATION_INPUT',
      message: expect.stringMatching(/^unknown parameter "yeer": this computation declares year: integer$/),
    });
  });

  it('refuses what is not a runnable computation', async () => {
    await expect(run(load('tables/orders.md'), {})).rejects.toMatchObject({
      code: 'COMPUTATION_FAILED',
      message: expect.stringMatching(/is a "SQL Table", not an Attested Computation/),
    });
    await expect(run(load('computations/revenue-year-postgres.md'), { year: 2026 })).rejects.toMatchObject({
      code: 'COMPUTATION_FAILED',
      message: 'no executor for runtime "postgres"; available runtimes: sqlite',
    });
    const pgConcept = load('computations/revenue-year-postgres.md');
    const outside: Concept = {
      ...pgConcept,
      computation: { ...pgConcept.computation!, file: '../../shop-data.sql' },
    };
    await expect(
      runComputation({ bundleRoot: BUNDLE, concept: outside, values: { year: 2026 }, executors: [] }),
    ).rejects.toMatchObject({ message: expect.stringMatching(/leads outside the bundle/) });
    const missing: Concept = { ...pgConcept, computation: { ...pgConcept.computation!, file: 'nope.sql' } };
    await expect(
      runComputation({ bundleRoot: BUNDLE, concept: missing, values: { year: 2026 }, executors: [] }),
    ).rejects.toMatchObject({ message: 'the computation file nope.sql does not exist in the bundle' });
    const undeclared = adhoc(
      'computations/adhoc.md',
      'runtime: sqlite\nparameters:\n  - { name: year, type: integer, required: true }',
      'SELECT COUNT(*) FROM orders WHERE id = @id',
    );
    await expect(run(undeclared, { year: 2026 })).rejects.toMatchObject({
      code: 'COMPUTATION_FAILED',
      message: expect.stringMatching(/references @id, which is not a declared parameter \(declared: year\)/),
    });
  });

  it('refuses statements that write, even on a writable handle', async () => {
    const db = new Database(file);
    const writable = sqliteExecutor({ database: db, log: new ReceiptLog() });
    const request = (sql: string): ExecuteRequest => ({ conceptId: 'x', sql, parameters: [], values: {} });
    try {
      for (const executor of [writable, sqlite]) {
        await expect(executor.execute(request('DELETE FROM orders'))).rejects.toMatchObject({
          code: 'COMPUTATION_FAILED',
          message: 'the statement writes to the database; a computation may only read',
        });
        await expect(executor.execute(request('DELETE FROM orders RETURNING id'))).rejects.toThrow(/writes/);
        await expect(executor.execute(request('SELECT 1; DELETE FROM orders'))).rejects.toThrow(
          /more than one statement/,
        );
      }
      expect(countOrders()).toBe(ORDERS.length);
    } finally {
      db.close();
    }
  });

  it('keeps receipts frozen and refuses a second receipt under a recorded job id', async () => {
    const receipt = attested(await run(revenue, { year: 2025 })).receipt;
    expect(() => {
      (receipt as { result: unknown }).result = [1];
    }).toThrow(TypeError);
    expect(log.record(copy(receipt))).toBe(receipt);
    const forged = copy(receipt);
    forged.result = [1];
    expect(() => log.record(forged)).toThrow(/already recorded with a different receipt/);
  });
});

describe('attested computations on PostgreSQL', () => {
  let server: Postgres;
  let log: ReceiptLog;
  let postgres: ReturnType<typeof postgresExecutor>;
  const revenue = load('computations/revenue-year-postgres.md');
  const byCurrency = adhoc(
    'computations/orders-by-currency.md',
    'runtime: postgres\nparameters:\n  - { name: currency, type: string, required: true }',
    'SELECT COUNT(*) AS orders FROM orders WHERE currency = @currency',
  );
  const run = (concept: Concept, values: Record<string, unknown>, executor: ComputationExecutor = postgres) =>
    runComputation({ bundleRoot: BUNDLE, concept, values, executors: { postgres: executor } });
  const countOrders = async () => {
    const client = new pg.Client(server.connectionString);
    await client.connect();
    try {
      return Number((await client.query('SELECT COUNT(*) AS n FROM orders')).rows[0].n);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    server = await startPostgres('shop');
    const client = new pg.Client(server.connectionString);
    await client.connect();
    await client.query(DATA);
    await client.end();
    log = new ReceiptLog();
    postgres = postgresExecutor({ connectionString: server.connectionString, log });
  }, 90_000);
  afterAll(async () => {
    await postgres?.close?.();
    await server?.stop();
  }, 30_000);

  it('runs the file-form computation in a read-only transaction and attests the exact revenue', async () => {
    for (const year of [2025, 2026]) {
      const outcome = attested(await run(revenue, { year }));
      const expected = eurInYear(year);
      // NUMERIC and bigint stay the server's exact text.
      expect(outcome.receipt.result).toEqual([decimal(sumCents(expected)), String(expected.length)]);
      expect(outcome.receipt.job_id).toMatch(/^postgres:\d+:\d+$/);
      const file = readFileSync(join(BUNDLE, 'references', 'computations', 'revenue-year.pg.sql'), 'utf8');
      expect(outcome.receipt.executed_sql).toBe(file.replace('@year', '$1'));
    }
    const outcome = attested(
      await runComputation({
        bundleRoot: BUNDLE,
        concept: revenue,
        values: { year: 2026 },
        executors: [postgres],
        claimed: 1690.78,
      }),
    );
    expect(formatOutcome(outcome)).toContain('revenue = "1690.78"');
    const again = attested(await run(revenue, { year: 2026 }));
    expect(again.receipt.job_id).not.toBe(outcome.receipt.job_id);
  });

  it('refuses a tampered receipt, a rewritten query and a receipt from another runtime', async () => {
    const good = attested(await run(revenue, { year: 2026 })).receipt;
    const dropped = copy(good);
    dropped.executed_sql = good.executed_sql.replace("AND o.currency = 'EUR'", '');
    expect(dropped.executed_sql).not.toBe(good.executed_sql);
    expect(
      refused(
        await attest({ bundleRoot: BUNDLE, concept: revenue, receipt: dropped, values: { year: 2026 }, log }),
      ).reason,
    ).toMatch(/^receipt tampered: .* in executed_sql$/);

    const rewritten = rewriting(postgres, (sql) => sql.replace("o.currency = 'EUR'", "o.currency <> 'XXX'"));
    expect(refused(await run(revenue, { year: 2026 }, rewritten)).reason).toMatch(
      /^provenance: job postgres:\d+:\d+ did not run the sanctioned computation: .*expected `= 'EUR' .*found `<> 'XXX'/,
    );

    const sqliteRevenue = load('computations/revenue-year-sqlite.md');
    expect(
      refused(
        await attest({
          bundleRoot: BUNDLE,
          concept: sqliteRevenue,
          receipt: good,
          values: { year: 2026 },
          log,
        }),
      ).reason,
    ).toMatch(/ran on runtime "postgres", but the computation's runtime is "sqlite"/);
  });

  it('runs a computation file written on Windows: a byte order mark and CRLF line ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tack-okf-'));
    try {
      cpSync(BUNDLE, dir, { recursive: true });
      const file = join(dir, 'references', 'computations', 'revenue-year.pg.sql');
      writeFileSync(file, `\uFEFF${readFileSync(file, 'utf8').replace(/\n/g, '\r\n')}`);
      const outcome = attested(
        await runComputation({
          bundleRoot: dir,
          concept: revenue,
          values: { year: 2026 },
          executors: [postgres],
        }),
      );
      expect(outcome.receipt.result).toEqual([
        decimal(sumCents(eurInYear(2026))),
        String(eurInYear(2026).length),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses SQL whose comments PostgreSQL reads differently from the attester, hiding or adding code', async () => {
    const good = attested(await run(revenue, { year: 2026 })).receipt;
    const sanctioned = good.executed_sql;
    // PostgreSQL nests block comments (this hides the currency filter) and ends a line comment at a lone
    // carriage return (this adds `OR TRUE`); read the way SQLite reads comments, both look like the sanctioned SQL.
    const forgeries = [
      sanctioned.replace("AND o.currency = 'EUR'", "/* /* */ AND o.currency = 'EUR' -- */\n"),
      sanctioned.replace("AND o.currency = 'EUR'", "AND o.currency = 'EUR' -- \r OR TRUE\n"),
    ];
    const client = new pg.Client(server.connectionString);
    await client.connect();
    try {
      for (const [i, executed] of forgeries.entries()) {
        // The forged text really computes another figure on the server...
        const ran = await client.query<unknown[]>({ text: executed, values: [2026], rowMode: 'array' });
        expect(ran.rows[0]?.[0], `forgery ${i}`).not.toBe((good.result as string[])[0]);
        // ...so a receipt recording it must not attest, whoever produced it.
        const forged = { ...copy(good), job_id: `postgres:forged:${i}`, executed_sql: executed };
        const forgedLog = new ReceiptLog();
        forgedLog.record(forged);
        const outcome = refused(
          await attest({
            bundleRoot: BUNDLE,
            concept: revenue,
            receipt: forged,
            values: { year: 2026 },
            log: forgedLog,
          }),
        );
        expect(outcome.reason, `forgery ${i}`).toMatch(/comment/);
      }
    } finally {
      await client.end();
    }
    // The executor refuses to run such text at all.
    const nested = rewriting(postgres, (sql) => sql.replace('FROM orders', 'FROM /* /* */ orders'));
    await expect(run(revenue, { year: 2026 }, nested)).rejects.toMatchObject({ code: 'COMPUTATION_FAILED' });
  });

  it('binds a string parameter as a value and lets nothing write', async () => {
    const eur = attested(await run(byCurrency, { currency: 'EUR' }));
    expect(eur.receipt.result).toEqual([String(ORDERS.filter((o) => o.currency === 'EUR').length)]);
    expect(eur.receipt.executed_sql).toBe('SELECT COUNT(*) AS orders FROM orders WHERE currency = $1');
    for (const currency of ["EUR'; DROP TABLE orders; --", "EUR' OR '1'='1"]) {
      expect(attested(await run(byCurrency, { currency })).receipt.result).toEqual(['0']);
    }
    const request = (sql: string): ExecuteRequest => ({ conceptId: 'x', sql, parameters: [], values: {} });
    await expect(postgres.execute(request('DELETE FROM orders'))).rejects.toMatchObject({
      code: 'COMPUTATION_FAILED',
      message: expect.stringMatching(/cannot execute DELETE in a read-only transaction \(SQLSTATE 25006\)/),
    });
    await expect(postgres.execute(request('SELECT 1; DROP TABLE orders'))).rejects.toThrow(
      /more than one statement/,
    );
    await expect(postgres.execute(request('CREATE TABLE intruder (a int)'))).rejects.toThrow(
      /read-only transaction/,
    );
    expect(await countOrders()).toBe(ORDERS.length);
    // The executor's connections are fine after refused statements.
    expect(attested(await run(revenue, { year: 2025 })).receipt.result).toEqual([
      decimal(sumCents(eurInYear(2025))),
      String(eurInYear(2025).length),
    ]);
  });
});
