/**
 * Inside a sandbox with a network allow-list the process has only loopback, and HTTP_PROXY takes a TCP address,
 * not a Unix socket. This script, run by the same Node that runs tack (`node -e FORWARDER -- port socket command
 * args...`), listens on 127.0.0.1:port inside the sandbox's own network namespace, relays every connection to
 * the proxy's Unix socket, and only once it listens starts the real command with the same stdio (no copying of
 * the MCP stream) and exits with its status.
 *
 * Why not a helper binary: socat would be one more system dependency to install and trust for a 20-line relay,
 * and Node is already there (tack runs on it). The price is one Node start (~40 ms) for servers with an
 * allow-list; servers with the network off or on need no forwarder.
 */
export const FORWARDER_PORT = 3128;

export const FORWARDER = `'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [port, socketPath, command, ...args] = process.argv.slice(1);
const relay = net.createServer((inside) => {
  const outside = net.connect(socketPath);
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
  inside.pipe(outside);
  outside.pipe(inside);
});
relay.on('error', (error) => {
  process.stderr.write('tack sandbox: the proxy relay failed: ' + error.message + '\\n');
  process.exit(70);
});
relay.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit' });
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const signal of signals) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write('tack sandbox: cannot start ' + command + ': ' + error.message + '\\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (!signal) process.exit(code === null ? 1 : code);
    for (const s of signals) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  });
});
`;
