import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import type { FastRequest } from '../../src/servers/serve.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * The stdio fast path (src/servers/serving/fast-stdio.ts) must answer as the SDK's instance does: two real
 * gateways serve stdio on in-memory streams in front of the same real stdio server, one with the fast path and
 * one without, and get the same lines; their answers are compared line by line.
 */

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A raw stdio connection: lines in, lines out. */
class Wire {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly lines: Array<Record<string, unknown>> = [];
  #buffer = '';

  constructor() {
    this.stdout.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString();
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        this.lines.push(JSON.parse(this.#buffer.slice(0, nl)) as Record<string, unknown>);
        this.#buffer = this.#buffer.slice(nl + 1);
      }
    });
  }

  send(message: unknown): void {
    this.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends a request and resolves with every line up to its response. */
  async request(message: { id: number } & Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
    const from = this.lines.length;
    this.send(message);
    await expect
      .poll(() => this.lines.slice(from).some((l) => l.id === message.id), { timeout: 10_000 })
      .toBe(true);
    return this.lines.slice(from);
  }

  /**
   * Sends a request and resolves with its response and the notifications sent for it before it (a notification
   * that belongs to a request comes before its result).
   */
  async exchange(message: { id: number } & Record<string, unknown>) {
    const from = this.lines.length;
    await this.request(message);
    const upTo = this.lines.findIndex((l, i) => i >= from && l.id === message.id);
    const lines = this.lines.slice(from, upTo + 1);
    return {
      response: lines.find((l) => l.id === message.id),
      notifications: lines.filter((l) => l.id === undefined).map((l) => JSON.stringify(l)),
    };
  }
}

type Call = { name: string; arguments: Record<string, unknown>; progressToken?: number; logLevel?: string };

const CALLS: Record<string, Call> = {
  'a plain result': { name: 'fx__echo', arguments: { text: 'hello' } },
  'structured content': { name: 'fx__env', arguments: {} },
  progress: { name: 'fx__slow', arguments: { steps: 3, delayMs: 30 }, progressToken: 7 },
  'log messages': { name: 'fx__chatter', arguments: {}, logLevel: 'info' },
  'an isError result': { name: 'fx__slow', arguments: { steps: -1 } },
};

describe('the stdio fast path', () => {
  let project: TempProject;
  const started: RunningGateway[] = [];
  const taken: FastRequest[] = [];

  async function serve(fastPath: boolean): Promise<Wire> {
    const wire = new Wire();
    const gateway = await startGateway({
      config: project.config({ fx: fixtureEntry('stdio-server.js') }),
      fastPath,
      stdio: { stdin: wire.stdin, stdout: wire.stdout },
    });
    started.push(gateway);
    if (fastPath) {
      const fast = gateway.gateway.fastPath;
      const take = fast.take.bind(fast);
      fast.take = (request) => {
        const took = take(request);
        if (took) taken.push(request);
        return took;
      };
    }
    return wire;
  }

  beforeAll(() => {
    project = tempProject();
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.close()));
    project?.[Symbol.dispose]();
  });

  for (const era of ['modern', 'legacy'] as const) {
    it(`answers ${era === 'modern' ? '2026-07-28' : '2025-era'} tools/call requests as the SDK does`, async () => {
      const wires = { fast: await serve(true), sdk: await serve(false) };
      if (era === 'legacy')
        for (const wire of Object.values(wires)) {
          await wire.request({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'raw', version: '1' },
            },
          });
          wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          await wire.request({
            jsonrpc: '2.0',
            id: 1,
            method: 'logging/setLevel',
            params: { level: 'info' },
          });
        }
      let id = 10;
      for (const [what, call] of Object.entries(CALLS)) {
        id++;
        const before = taken.length;
        const message = {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: call.name,
            arguments: call.arguments,
            ...(era === 'modern'
              ? {
                  _meta: {
                    ...MODERN_META,
                    ...(call.logLevel ? { 'io.modelcontextprotocol/logLevel': call.logLevel } : {}),
                    ...(call.progressToken !== undefined ? { progressToken: call.progressToken } : {}),
                  },
                }
              : call.progressToken !== undefined
                ? { _meta: { progressToken: call.progressToken } }
                : {}),
          },
        };
        const fast = await wires.fast.exchange(message);
        const sdk = await wires.sdk.exchange(message);
        expect(fast, what).toEqual(sdk);
        expect(taken.length, what).toBe(before + 1);
      }
    });
  }

  it('stops a call it serves when the client cancels it, and sends no response for it', async () => {
    const wire = await serve(true);
    const before = taken.length;
    wire.send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'fx__slow', arguments: { steps: 1, delayMs: 1234 }, _meta: MODERN_META },
    });
    await expect.poll(() => taken.length).toBe(before + 1);
    wire.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } });
    const after = await wire.request({
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/call',
      params: { name: 'fx__echo', arguments: { text: 'next' }, _meta: MODERN_META },
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(wire.lines.some((l) => l.id === 5)).toBe(false);
    expect(after.at(-1)?.result).toMatchObject({ content: [{ type: 'text', text: 'next' }] });
  });
});
