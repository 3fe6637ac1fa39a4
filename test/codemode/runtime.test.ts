import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apiBinding, compactApi, safeIdentifier, serverApis } from '../../src/codemode/declarations.js';
import {
  DEFAULT_SCRIPT_LIMITS,
  type HostCall,
  runScript,
  type ScriptLimits,
} from '../../src/codemode/runtime.js';
import { stripTypes } from '../../src/codemode/strip.js';
import { scriptSource } from '../../src/codemode/tools.js';
import { REPO } from '../helpers/project.js';

/** A host that echoes what it is called with, and keeps a log of the calls. */
function echoHost(): { call: HostCall; calls: Array<{ target: string; args: unknown }> } {
  const calls: Array<{ target: string; args: unknown }> = [];
  return {
    calls,
    call: async (target, args) => {
      calls.push({ target, args });
      return { ok: true, value: { target, args } };
    },
  };
}

const binding = { files: { list: 'mcp__files__list', read: 'mcp__files__read' } };
const fast: ScriptLimits = { ...DEFAULT_SCRIPT_LIMITS, cpuMs: 300, memoryBytes: 16 * 1024 * 1024 };

/** Counts ticks of a 20 ms interval on the main thread while `work` runs: an engine on it would freeze them. */
async function ticking<T>(work: () => Promise<T>): Promise<{ result: T; ticks: number; ms: number }> {
  let ticks = 0;
  const interval = setInterval(() => ticks++, 20);
  const started = performance.now();
  try {
    const result = await work();
    return { result, ticks, ms: performance.now() - started };
  } finally {
    clearInterval(interval);
  }
}

describe('the code-mode runtime (QuickJS in WebAssembly)', () => {
  it('runs a script that calls tools, captures console.log, and returns only its value', async () => {
    const host = echoHost();
    const outcome = await runScript(
      `const a = await mcp.files.list({ dir: "/" });
       const [b, c] = await Promise.all([mcp.files.read({ p: 1 }), mcp.files.read({ p: 2 })]);
       console.log("listed", a.target, { n: 2 });
       return { read: [b.args.p, c.args.p] };`,
      binding,
      host.call,
    );
    expect(outcome.status).toBe('ok');
    expect(JSON.parse(outcome.value!)).toEqual({ read: [1, 2] });
    expect(outcome.logs).toEqual(['listed mcp__files__list {"n":2}']);
    expect(host.calls.map((c) => c.target)).toEqual([
      'mcp__files__list',
      'mcp__files__read',
      'mcp__files__read',
    ]);
    expect(outcome.calls).toBe(3);
  });

  it('a tool error throws inside the script, which may catch it', async () => {
    const outcome = await runScript(
      `try { await mcp.files.read({}); } catch (e) { return "caught: " + e.message; }`,
      binding,
      async () => ({ ok: false, error: 'no such file' }),
    );
    expect(outcome).toMatchObject({ status: 'ok', value: 'caught: no such file' });
    // A host that throws at once (not a rejected promise) is the same to the script.
    const thrown = await runScript(
      `try { await mcp.files.read({}); } catch (e) { return "caught: " + e.message; }`,
      binding,
      () => {
        throw new Error('host broke');
      },
    );
    expect(thrown).toMatchObject({ status: 'ok', value: 'caught: host broke' });
  });

  it('has no require, process, fetch, timers, module loader or host globals', async () => {
    const host = echoHost();
    const probe = await runScript(
      'return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof __tackCall, typeof Uint8Array, typeof WebAssembly].join()',
      binding,
      host.call,
    );
    expect(probe.value).toBe(Array(7).fill('undefined').join());
    for (const [code, message] of [
      ['return require("fs")', /ReferenceError: 'require' is not defined/],
      ['return process.env', /ReferenceError: 'process' is not defined/],
      ['return await fetch("http://127.0.0.1/")', /ReferenceError: 'fetch' is not defined/],
      ['return await import("node:fs")', /could not load module/],
      ['import fs from "fs"', /SyntaxError/],
    ] as const) {
      const outcome = await runScript(code, binding, host.call);
      expect(outcome.status, code).toBe('error');
      expect(outcome.error, code).toMatch(message);
    }
    expect(host.calls).toEqual([]);
  });

  it('constructor.constructor reaches only the sandbox’s own Function and global', async () => {
    const outcome = await runScript(
      `const g = (() => {}).constructor.constructor("return this")();
       const viaApi = mcp.files.list.constructor("return this")();
       return [g === globalThis, viaApi === globalThis, typeof g.process, typeof g.require].join()`,
      binding,
      echoHost().call,
    );
    expect(outcome.value).toBe('true,true,undefined,undefined');
  });

  it('prototype pollution of the API object stays in the script and cannot reroute a call', async () => {
    const host = echoHost();
    const outcome = await runScript(
      `'use strict';
       const tried = [];
       for (const attempt of [
         () => { mcp.files.list = () => "hijacked"; },
         () => { mcp.evil = {}; },
         () => { Object.setPrototypeOf(mcp.files, { list: () => "hijacked" }); },
         () => { Object.defineProperty(mcp.files, "read", { value: 1 }); },
       ]) { try { attempt(); tried.push("changed"); } catch (e) { tried.push(e.name); } }
       Object.prototype.polluted = "yes";
       const r = await mcp.files.list({ a: 1 });
       return { tried, target: r.target };`,
      binding,
      host.call,
    );
    expect(outcome.status).toBe('ok');
    const value = JSON.parse(outcome.value!);
    expect(value.tried).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    // The call went to the real tool; whatever the script did to its prototypes, the host got plain JSON.
    expect(host.calls.map((c) => c.target)).toEqual(['mcp__files__list']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('stops an infinite loop at the CPU limit, and runs the next script normally', async () => {
    const loop = await runScript('while (true) {}', binding, echoHost().call, fast);
    expect(loop).toMatchObject({ status: 'limit', limit: 'cpu' });
    expect(loop.error).toMatch(/more than 300 ms of CPU time/);
    const next = await runScript('return 1 + 1', binding, echoHost().call, fast);
    expect(next).toMatchObject({ status: 'ok', value: '2' });
  });

  it('stops a memory bomb at the memory limit without growing the process past the engine’s bound', async () => {
    const rss = process.memoryUsage().rss;
    const bomb = await runScript(
      'const a = []; for (;;) a.push("x".repeat(100000) + a.length);',
      binding,
      echoHost().call,
      { ...fast, cpuMs: 20_000 },
    );
    expect(bomb).toMatchObject({ status: 'limit', limit: 'memory' });
    expect(bomb.error).toMatch(/more than 16 MiB of memory/);
    // The engine's memory has a 256 MiB maximum whatever the allocator does.
    expect(process.memoryUsage().rss - rss).toBeLessThan(400 * 1024 * 1024);
    expect((await runScript('return "alive"', binding, echoHost().call, fast)).value).toBe('alive');
  });

  // A loop whose every iteration is one long built-in (a default sort of 3.2 million numbers takes seconds in
  // QuickJS) passes no interrupt poll for seconds; the engine runs on a worker thread the main thread ends.
  const sortLoop = `const b = []; for (let i = 0; i < 1e5; i++) b.push((i * 7919) % 1000003);
    let a = b; for (let k = 0; k < 5; k++) a = a.concat(a);
    for (;;) a.sort();`;
  const roomy: ScriptLimits = { ...DEFAULT_SCRIPT_LIMITS, memoryBytes: 128 * 1024 * 1024 };

  it('stops a loop of long built-ins at the CPU limit at once, and the main thread keeps running meanwhile', async () => {
    const { result, ticks, ms } = await ticking(() =>
      runScript(sortLoop, binding, echoHost().call, { ...roomy, cpuMs: 1_000 }),
    );
    expect(result).toMatchObject({ status: 'limit', limit: 'cpu' });
    expect(result.error).toMatch(/more than 1000 ms of CPU time/);
    // Ended within the limit and a grace, not after the sort running then (seconds); generous margins for load.
    expect(result.cpuMs).toBeLessThan(2_000);
    expect(ms).toBeLessThan(8_000);
    expect(ticks).toBeGreaterThanOrEqual(10);
    // The thread ended is replaced: the next script runs.
    expect(await runScript('return 1 + 1', binding, echoHost().call, fast)).toMatchObject({ value: '2' });
  });

  it('an abort ends a busy script at once', async () => {
    const controller = new AbortController();
    const pending = ticking(() =>
      runScript(sortLoop, binding, echoHost().call, { ...roomy, cpuMs: 60_000 }, controller.signal),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const aborted = performance.now();
    controller.abort();
    const { result, ticks } = await pending;
    expect(result.status).toBe('aborted');
    expect(performance.now() - aborted).toBeLessThan(1_000);
    expect(ticks).toBeGreaterThanOrEqual(10);
    expect(await runScript('return "alive"', binding, echoHost().call, fast)).toMatchObject({
      value: 'alive',
    });
  });

  it('the built runtime (dist/, as bin/tack.js runs it) starts its thread from worker.js beside it', async () => {
    const built = (await import(
      pathToFileURL(join(REPO, 'dist', 'src', 'codemode', 'runtime.js')).href
    )) as typeof import('../../src/codemode/runtime.js');
    const host = echoHost();
    const outcome = await built.runScript(
      'console.log("from dist"); return (await mcp.files.read({ p: 7 })).args.p',
      binding,
      host.call,
    );
    expect(outcome).toMatchObject({ status: 'ok', value: '7', logs: ['from dist'], calls: 1 });
  });

  it('more scripts at once than engine threads: the rest wait for one, and each ends as it should', async () => {
    const outcomes = await Promise.all([
      ...Array.from({ length: 5 }, () => runScript('while (true) {}', binding, echoHost().call, fast)),
      runScript('return "last"', binding, echoHost().call, fast),
    ]);
    expect(outcomes.slice(0, 5).map((o) => o.limit)).toEqual(Array(5).fill('cpu'));
    expect(outcomes[5]).toMatchObject({ status: 'ok', value: 'last' });
  });

  it('stops deep recursion as a stack overflow, not a host crash', async () => {
    const deep = await runScript(
      'function f(n) { return f(n + 1) + 1; } return f(0);',
      binding,
      echoHost().call,
    );
    expect(deep).toMatchObject({ status: 'limit', limit: 'stack' });
    const fine = await runScript(
      'function f(n) { return n ? f(n - 1) + 1 : 0; } return f(500);',
      binding,
      echoHost().call,
    );
    expect(fine.value).toBe('500');
  });

  it('ends at the call limit, the output limit, and a promise nothing settles', async () => {
    const host = echoHost();
    const many = await runScript(
      'for (let i = 0; i < 50; i++) await mcp.files.list({ i });',
      binding,
      host.call,
      {
        ...fast,
        maxCalls: 5,
      },
    );
    expect(many).toMatchObject({ status: 'limit', limit: 'calls', calls: 5 });
    expect(host.calls).toHaveLength(5);
    const chatty = await runScript(
      'for (let i = 0; i < 1000; i++) console.log("line " + i); return "x".repeat(500);',
      binding,
      host.call,
      {
        ...fast,
        maxOutputChars: 200,
      },
    );
    expect(chatty.status).toBe('ok');
    expect(chatty.truncated).toBe(true);
    expect(chatty.logs.join('\n').length).toBeLessThanOrEqual(210);
    const stuck = await runScript('await new Promise(() => {}); return 1', binding, host.call, fast);
    expect(stuck).toMatchObject({ status: 'error' });
    expect(stuck.error).toMatch(/never comes/);
  });

  it('an abort stops a script waiting for a tool, and the call in flight sees the abort', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const pending = runScript(
      'await mcp.files.read({}); return "finished"',
      binding,
      (_target, _args, signal) =>
        new Promise((resolve) => {
          seen = signal;
          signal.addEventListener('abort', () => resolve({ ok: false, error: 'aborted' }));
        }),
      fast,
      controller.signal,
    );
    setTimeout(() => controller.abort(), 50);
    const outcome = await pending;
    expect(outcome.status).toBe('aborted');
    expect(seen?.aborted).toBe(true);
  });

  it('ends at the wall time while a tool call hangs', async () => {
    const outcome = await runScript(
      'await mcp.files.read({}); return "finished"',
      binding,
      () => new Promise(() => {}),
      { ...fast, wallMs: 100 },
    );
    expect(outcome).toMatchObject({ status: 'limit', limit: 'wall' });
  });
});

describe('TypeScript stripping', () => {
  it('strips types and keeps the function body runnable', async () => {
    const stripped = stripTypes(
      'interface Row { n: number }\nconst rows: Row[] = [{ n: 1 }, { n: 2 }];\nreturn rows.map((r: Row): number => r.n * 2) as number[];',
    );
    expect('code' in stripped).toBe(true);
    const outcome = await runScript((stripped as { code: string }).code, {}, echoHost().call);
    expect(JSON.parse(outcome.value!)).toEqual([2, 4]);
  });

  it('says where the TypeScript does not parse', () => {
    expect(stripTypes('const a: = 1')).toEqual({ error: expect.stringMatching(/TypeScript: .*line 1/) });
  });

  /** run_code's script, as a call carries it (scriptSource), through the runtime. */
  function runTypeScript(code: string, limits: ScriptLimits, signal?: AbortSignal) {
    const script = scriptSource({ code, language: 'typescript' });
    if ('error' in script) throw new Error(script.error);
    return runScript(script.code, {}, echoHost().call, limits, signal);
  }

  it('strips on the engine’s thread: the script runs, and a parse error names its line', async () => {
    const ok = await runTypeScript('const n: number = 20;\nreturn <number>(n + 1) * 2;', fast);
    expect(ok).toMatchObject({ status: 'ok', value: '42' });
    const broken = await runTypeScript('const a = 1;\nconst b: = 2;', fast);
    expect(broken).toMatchObject({ status: 'error' });
    expect(broken.error).toMatch(/^TypeScript: .*\(line 2, column \d+\)/);
  });

  // Each level of nested `<T>(` doubles sucrase's work: 21 levels took 14 s, 22 about 28 s, on the caller's thread.
  const nested = (levels: number) => `const x = 1;\nreturn ${'<T>('.repeat(levels)}x${')'.repeat(levels)};`;

  it('nested type assertions stop at the script’s CPU limit with a clear error, the main thread free', async () => {
    const { result, ticks, ms } = await ticking(() => runTypeScript(nested(22), fast));
    expect(result).toMatchObject({ status: 'limit', limit: 'cpu' });
    expect(result.error).toMatch(
      /^TypeScript: stripping the types took longer than the script's time limit of 300 ms; /,
    );
    // The CPU limit (300 ms) and its grace, with a margin for a loaded machine; never the 28 s of stripping.
    expect(ms).toBeLessThan(5_000);
    expect(ticks).toBeGreaterThanOrEqual(5);
    // The wall limit covers stripping too (a script waiting for a thread included).
    const wall = await runTypeScript(nested(22), { ...fast, cpuMs: 60_000, wallMs: 400 });
    expect(wall).toMatchObject({ status: 'limit', limit: 'wall' });
    expect(wall.error).toMatch(/took longer than the script's time limit of 400 ms/);
    expect(await runTypeScript('return <string>"alive"', fast)).toMatchObject({ value: 'alive' });
  });

  it('an abort (Ctrl-C) ends stripping at once', async () => {
    const controller = new AbortController();
    const pending = runTypeScript(nested(22), { ...fast, cpuMs: 60_000 }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const aborted = performance.now();
    controller.abort();
    expect(await pending).toMatchObject({ status: 'aborted' });
    expect(performance.now() - aborted).toBeLessThan(1_000);
  });

  it('refuses a script longer than maxCodeChars before any work on its text', async () => {
    const long = `return 1;\n${'// padding\n'.repeat(200)}`;
    for (const language of ['javascript', 'typescript']) {
      const script = scriptSource({ code: long, language });
      if ('error' in script) throw new Error(script.error);
      const outcome = await runScript(script.code, {}, echoHost().call, { ...fast, maxCodeChars: 1_000 });
      expect(outcome, language).toMatchObject({ status: 'limit', limit: 'size', calls: 0 });
      expect(outcome.error).toMatch(/the script is \d+ characters long, over the limit of 1000/);
    }
    expect(DEFAULT_SCRIPT_LIMITS.maxCodeChars).toBe(200_000);
  });
});

describe('the typed API of a catalog', () => {
  const tool = (server: string, toolName: string, extra: Record<string, unknown> = {}) => ({
    name: `mcp__${server}__${toolName}`,
    server,
    toolName,
    description: `Does ${toolName}.`,
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Where' } },
      required: ['path'],
    },
    ...extra,
  });

  it('declares mcp.<server>.<tool>(args): Promise<Result> from input and output schemas, with doc comments', () => {
    const [api] = serverApis([
      tool('files', 'read_file'),
      tool('files', 'stat', {
        outputSchema: {
          type: 'object',
          properties: { size: { type: 'integer' }, kind: { enum: ['file', 'dir'] } },
          required: ['size'],
        },
      }),
    ]);
    expect(api!.declarations).toContain('declare namespace mcp.files {');
    expect(api!.declarations).toContain('/** Does read_file. */');
    expect(api!.declarations).toContain(
      'function read_file(args: { /** Where */ path: string }): Promise<string>;',
    );
    expect(api!.declarations).toContain(
      'function stat(args: { /** Where */ path: string }): Promise<{ size: number; kind?: "file" | "dir" }>;',
    );
    expect(apiBinding([api!])).toEqual({
      files: { read_file: 'mcp__files__read_file', stat: 'mcp__files__stat' },
    });
  });

  it('lists result shapes in a line per server: the usual one once, nested objects as object, no arguments', () => {
    const listing = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const apis = serverApis([
      tool('files', 'read_file'),
      tool('files', 'stat', {
        outputSchema: { type: 'object', properties: { size: { type: 'integer' } }, required: ['size'] },
      }),
      tool('files', 'list', {
        outputSchema: {
          type: 'object',
          properties: { entries: { type: 'array', items: { anyOf: [listing, { ...listing, title: 'b' }] } } },
          required: ['entries'],
        },
      }),
      tool('files', 'remove'),
      tool('notes', 'add', { outputSchema: { type: 'object', properties: { id: { type: 'string' } } } }),
    ]);
    expect(compactApi(apis)).toBe(
      [
        'mcp.files → text; stat → { size: number }; list → { entries: Array<object> }',
        'mcp.notes → { id?: string }',
      ].join('\n'),
    );
    expect(compactApi(apis)).not.toContain('path');
    // The full declarations still carry every argument and nested field.
    expect(apis[0]!.declarations).toContain(
      'function list(args: { /** Where */ path: string }): Promise<{ entries: Array<{ name: string }> }>;',
    );
  });

  it('makes identifiers safe and unique, and keeps hostile text out of the code', () => {
    expect(safeIdentifier('get-item')).toBe('get_item');
    expect(safeIdentifier('2fa')).toBe('_2fa');
    expect(safeIdentifier('delete')).toBe('_delete');
    expect(safeIdentifier('__proto__')).toBe('___proto__');
    const [api] = serverApis([
      tool('my-server', 'get-item'),
      tool('my-server', 'get_item'),
      tool('my-server', 'x', { description: 'Ends the comment */ declare const pwned: 1; /*' }),
    ]);
    expect(api!.identifier).toBe('my_server');
    expect(Object.keys(api!.tools)).toEqual(['get_item', 'get_item_2', 'x']);
    expect(api!.declarations).not.toContain('*/ declare const pwned');
  });

  it('bounds a hostile schema and description, and caches by digest', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 50; i++) deep = { type: 'object', properties: { a: deep } };
    const wide = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`p${i}`, { type: 'string' }])),
    };
    const tools = [
      tool('h', 'deep', { inputSchema: deep }),
      tool('h', 'wide', { inputSchema: wide, description: 'x'.repeat(100_000) }),
    ];
    const [api] = serverApis(tools);
    expect(api!.declarations.length).toBeLessThan(3_000);
    expect(api!.declarations).toContain('function wide(args: Record<string, unknown>)');
    expect(serverApis(tools)[0]).toBe(api);
  });

  it('a small schema whose type would multiply (a list of types at every level) costs little to declare', () => {
    // 2 KB of schema: every level lists "object" 40 times, and each was a new walk of what is below it (40^5
    // walks: minutes on the main thread of a gateway listing its tools).
    let inner: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 6; i++) inner = { type: Array(40).fill('object'), properties: { a: inner } };
    const anyOf = (levels: number): unknown =>
      levels === 0 ? { type: 'string' } : { anyOf: Array.from({ length: 20 }, () => anyOf(levels - 1)) };
    const started = performance.now();
    const [api] = serverApis([
      tool('m', 'types', { inputSchema: { type: 'object', properties: { a: inner } } }),
      tool('m', 'options', { inputSchema: { type: 'object', properties: { a: anyOf(4) } } }),
    ]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(api!.declarations).toContain('function types(args: Record<string, unknown>)');
    expect(api!.declarations).toContain('function options(args: Record<string, unknown>)');
  });
});
