import type { Client } from '@modelcontextprotocol/client';
import { type Era, load, type PeerName, type Recorded, record, rssMB, startPeer } from './gateway-peers.js';
import { isMain, log, median, round, tempDir } from './util.js';

/**
 * Issue 28: does the gateway's memory stay flat under a long steady load, or does something grow? `tack serve
 * --http` (and, with PEERS, the stdio-to-HTTP gateways a user would pick instead, each in front of the same
 * stdio fixture) under 16 connections replaying a recorded tools/call "echo", each connection a 2025-era client
 * with its own session (ERAS=modern,legacy adds the stateless era), for MINUTES minutes (default 10), in
 * 30-second slices taking turns between the peers. RSS is read from /proc every second of load; the report gives
 * each minute's median and the slope of a least-squares line through the minute medians after the first (the
 * first minute is the heap growing to its working size).
 */

export interface SoakOptions {
  minutes?: number;
  connections?: number;
  peers?: readonly PeerName[];
  eras?: readonly Era[];
}

const SLICE_SECONDS = 30;

export async function runGatewaySoak(options: SoakOptions = {}) {
  const minutes = options.minutes ?? 10;
  const connections = options.connections ?? 16;
  const names = options.peers ?? (['tack'] as const);
  const eras = options.eras ?? (['legacy'] as const);
  const tmp = tempDir('gateway-soak');
  const clients: Client[] = [];
  const peers = [];
  try {
    for (const name of names) peers.push(await startPeer(name, `${tmp.dir}/home`, tmp.dir));
    const requests = new Map<string, Recorded[]>();
    for (const peer of peers)
      for (const era of eras) {
        const recorded: Recorded[] = [];
        for (let i = 0; i < (era === 'legacy' ? connections : 1); i++) {
          const session = await record(peer.url, peer.tool, era);
          clients.push(session.client);
          recorded.push(session.request);
        }
        requests.set(`${peer.name} ${era}`, recorded);
      }
    const samples = new Map<string, Array<{ s: number; mb: number }>>(peers.map((p) => [p.name, []]));
    const served = new Map<string, { requests: number; errors: number; non2xx: number }>(
      peers.map((p) => [p.name, { requests: 0, errors: 0, non2xx: 0 }]),
    );
    const slices = Math.ceil((minutes * 60) / SLICE_SECONDS);
    for (let slice = 0; slice < slices; slice++) {
      const era = eras[slice % eras.length]!;
      for (const peer of slice % 2 === 0 ? peers : [...peers].reverse()) {
        log(`gateway soak: slice ${slice + 1}/${slices}, ${era}, ${peer.name}`);
        const list = samples.get(peer.name)!;
        const run = await load(peer, requests.get(`${peer.name} ${era}`)!, SLICE_SECONDS, connections, () => {
          const mb = rssMB(peer.service.process.pid!);
          if (mb !== undefined) list.push({ s: list.length + 1, mb });
        });
        const total = served.get(peer.name)!;
        total.requests += run.requests;
        total.errors += run.errors;
        total.non2xx += run.non2xx;
      }
    }
    const report = Object.fromEntries(
      peers.map((peer) => {
        const list = samples.get(peer.name)!;
        const perMinute: number[] = [];
        for (let m = 0; m * 60 < list.length; m++)
          perMinute.push(median(list.slice(m * 60, (m + 1) * 60).map((x) => x.mb)));
        return [
          peer.name,
          {
            ...served.get(peer.name)!,
            rssMBMedianPerMinute: perMinute,
            rssMBMax: Math.max(...list.map((x) => x.mb)),
            rssMBSlopePerMinuteAfterFirst: slope(perMinute.slice(1)),
          },
        ];
      }),
    );
    return {
      description: `${names.join(', ')} under ${connections} connections replaying tools/call "echo" (${eras.join(' and ')}; 2025 era: one session per connection) for ${minutes} minutes in ${SLICE_SECONDS}-s slices, peers taking turns; RSS from /proc every second of load`,
      minutes,
      connections,
      peers: report,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all(peers.map((peer) => peer.service.stop()));
    tmp.remove();
  }
}

/** Least-squares slope of `values` against their index (MB per minute). */
function slope(values: number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  const meanX = (n - 1) / 2;
  const meanY = values.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  values.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return round(num / den, 2);
}

if (isMain(import.meta.url)) {
  const peers = process.env.PEERS?.split(',') as PeerName[] | undefined;
  const eras = process.env.ERAS?.split(',') as Era[] | undefined;
  process.stdout.write(
    `${JSON.stringify(
      await runGatewaySoak({
        minutes: Number(process.env.MINUTES ?? 10),
        ...(peers ? { peers } : {}),
        ...(eras ? { eras } : {}),
      }),
      null,
      2,
    )}\n`,
  );
}
