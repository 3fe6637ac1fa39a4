import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /**
   * A network that stops carrying anything, as a partition or a hung server does: open connections stay open and
   * silent both ways, new ones are accepted and get nothing. Nothing is refused, nothing is closed.
   */
  freeze(): void;
  /** Carries again what waited, and every new connection. */
  thaw(): void;
  close(): Promise<void>;
}

/** A TCP forwarder on 127.0.0.1 to `target` (a real server), that a test can freeze. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let frozen = false;
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((inbound) => {
    const outbound = connect(target.port, target.host);
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    if (frozen) for (const s of pair) s.pause();
    const end = () => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    freeze() {
      frozen = true;
      for (const pair of pairs) for (const s of pair) s.pause();
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) for (const s of pair) s.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) for (const s of pair) s.destroy();
        server.close(() => resolve());
      }),
  };
}
