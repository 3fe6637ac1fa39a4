import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { SandboxPolicy } from '../config/sandbox.js';
import { runCapped } from '../util/run-capped.js';
import { compareText } from '../util/text-order.js';
import { explainPath } from './explain.js';
import { prepareLaunch, type SandboxStatus } from './launch.js';
import { accessOf, type MountPlan } from './mounts.js';

/**
 * `tack sandbox check`: runs a small Node probe inside a policy, exactly as the server (or script) would run, and
 * compares what it could reach with what the policy says it may. Reads are stats (the probe learns no content),
 * writes create a file the host then looks for (a write that lands in a throwaway folder of the sandbox is told
 * apart from one that reaches the host), the network check connects to a port tack opens on the host's loopback,
 * and the proxy checks read the proxy's own decisions.
 */

export type Outcome = 'visible' | 'hidden' | 'writable' | 'throwaway' | 'refused' | 'reachable' | 'allowed';

export interface CheckRow {
  check: 'read' | 'write' | 'network' | 'proxy';
  target: string;
  /** What the target is: `home folder`, `workspace`, `read[0]`. */
  label: string;
  expected: Outcome;
  observed: Outcome;
  /** The rule that decides, from the policy. */
  rule: string;
  /** The probe's own words (an errno), when it has some. */
  detail?: string;
}

export interface CheckReport {
  status: SandboxStatus;
  rows: CheckRow[];
  /** Rows where the probe saw something other than the policy says. */
  mismatches: number;
}

export interface CheckSpec {
  /** `server "fs"`, `skill scripts`. */
  subject: string;
  cwd: string;
  env: Record<string, string>;
  note?: (message: string) => void;
}

const PROBE = `'use strict';
const fs = require('node:fs');
const net = require('node:net');
const http = require('node:http');
const input = JSON.parse(process.argv[1]);
const out = { reads: {}, writes: {}, network: undefined, proxies: {} };
for (const path of input.reads) {
  try { fs.statSync(path); out.reads[path] = 'ok'; } catch (e) { out.reads[path] = e.code || String(e); }
}
for (const file of input.writes) {
  try { fs.writeFileSync(file, 'tack sandbox check\\n'); out.writes[file] = 'ok'; } catch (e) { out.writes[file] = e.code || String(e); }
}
const connect = () => new Promise((resolve) => {
  const socket = net.connect({ host: '127.0.0.1', port: input.port });
  const done = (result) => { socket.destroy(); resolve(result); };
  socket.setTimeout(2000, () => done('ETIMEDOUT'));
  socket.once('connect', () => done('ok'));
  socket.once('error', (e) => done(e.code || String(e)));
});
const viaProxy = (target) => new Promise((resolve) => {
  const proxy = process.env.HTTP_PROXY;
  if (!proxy) return resolve('no HTTP_PROXY');
  const url = new URL(proxy);
  const req = http.request({ host: url.hostname, port: url.port, method: 'CONNECT', path: target, timeout: 2000 });
  req.once('connect', (res, socket) => { socket.destroy(); resolve(String(res.statusCode)); });
  req.once('response', (res) => { res.resume(); resolve(String(res.statusCode)); });
  req.once('timeout', () => { req.destroy(); resolve('pending'); });
  req.once('error', (e) => resolve(e.code || String(e)));
  req.end();
});
(async () => {
  out.network = await connect();
  for (const target of input.proxies) out.proxies[target] = await viaProxy(target);
  process.stdout.write(JSON.stringify(out));
})();
`;

/** Runs the probe inside `policy` and reports every check against what the policy says. */
export async function checkSandbox(policy: SandboxPolicy, spec: CheckSpec): Promise<CheckReport> {
  const listener = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  const marker = `.tack-sandbox-check-${process.pid}-${Date.now()}`;
  let launch: Awaited<ReturnType<typeof prepareLaunch>> | undefined;
  const planned = plannedChecks(policy, marker);
  try {
    launch = await prepareLaunch(policy, {
      command: process.execPath,
      args: ['-e', PROBE, '--', JSON.stringify({ ...planned.input, port })],
      env: spec.env,
      cwd: spec.cwd,
      subject: spec.subject,
      note: spec.note ?? (() => {}),
    });
    if (!launch.plan) return { status: launch.status, rows: [], mismatches: 0 };
    const run = await runCapped([launch.command, ...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      timeoutMs: 30_000,
      maxOutputBytes: 1024 * 1024,
    });
    let seen: ProbeOutput;
    try {
      seen = JSON.parse(run.stdout) as ProbeOutput;
    } catch {
      throw new Error(
        `the probe did not report (exit ${run.exitCode ?? run.signal}): ${run.stderr.trim().split('\n').slice(-3).join(' ')}`,
      );
    }
    const rows = planned.rows(launch.plan, seen, launch.decisions());
    return { status: launch.status, rows, mismatches: rows.filter((r) => r.expected !== r.observed).length };
  } finally {
    // What the probe wrote where it could (the host's side of the workspace, its state folder) goes.
    for (const file of planned.input.writes) rmSync(file, { force: true });
    await launch?.close();
    listener.close();
  }
}

interface ProbeOutput {
  reads: Record<string, string>;
  writes: Record<string, string>;
  network: string;
  proxies: Record<string, string>;
}

/** What to probe for this policy, and how to turn the probe's output into rows. */
function plannedChecks(policy: SandboxPolicy, marker: string) {
  const reads: Array<{ path: string; label: string }> = [];
  const writes: Array<{ dir: string; label: string }> = [];
  for (const home of policy.homes) {
    const file = sample(home, 1);
    if (file) reads.push({ path: file, label: 'home folder' });
    const ssh = join(home, '.ssh');
    if (existsSync(ssh)) reads.push({ path: sample(ssh) ?? ssh, label: 'SSH keys' });
    writes.push({ dir: home, label: 'home folder' });
  }
  reads.push({ path: sample(policy.workspace) ?? policy.workspace, label: 'workspace' });
  writes.push({ dir: policy.workspace, label: 'workspace' });
  writes.push({ dir: dirname(policy.workspace), label: 'outside the workspace' });
  for (const [i, rule] of policy.read.entries()) reads.push({ path: rule.path, label: `read[${i}]` });
  for (const [i, rule] of policy.write.entries()) writes.push({ dir: rule.path, label: `write[${i}]` });
  writes.push({ dir: policy.stateDir, label: 'its state folder' });
  writes.push({ dir: '/tmp', label: 'temp folder' });
  for (const dir of policy.hidden)
    if (existsSync(dir) && !policy.hidden.some((other) => other !== dir && dir.startsWith(`${other}/`)))
      reads.push({ path: sample(dir) ?? dir, label: "tack's own folder" });
  const uniqueReads = reads.filter((r, i) => reads.findIndex((x) => x.path === r.path) === i);
  const uniqueWrites = writes.filter((w, i) => writes.findIndex((x) => x.dir === w.dir) === i);
  const proxies = Array.isArray(policy.network)
    ? [
        ...policy.network.map(
          (rule) => `${rule.subdomains ? `tack-check.${rule.host}` : rule.host}:${rule.port}`,
        ),
        'not-listed.tack-check.invalid:443',
      ]
    : [];
  const files = uniqueWrites.map((w) => join(w.dir, marker));
  return {
    input: { reads: uniqueReads.map((r) => r.path), writes: files, proxies },
    rows(
      plan: MountPlan,
      seen: ProbeOutput,
      decisions: ReadonlyArray<{ target: string; allowed: boolean; reason: string }>,
    ): CheckRow[] {
      const rows: CheckRow[] = [];
      for (const read of uniqueReads) {
        const access = accessOf(plan, read.path);
        const result = seen.reads[read.path] ?? 'not run';
        rows.push({
          check: 'read',
          target: read.path,
          label: read.label,
          expected: access.read ? 'visible' : 'hidden',
          observed: result === 'ok' ? 'visible' : 'hidden',
          rule: access.mount.rule,
          ...(result === 'ok' ? {} : { detail: result }),
        });
      }
      uniqueWrites.forEach((write, i) => {
        const file = files[i]!;
        // The folder decides: one that is not visible does not exist inside; a hidden one is a throwaway tmpfs.
        const access = accessOf(plan, write.dir);
        const result = seen.writes[file] ?? 'not run';
        const expected: Outcome =
          access.read && access.write ? (access.throwaway ? 'throwaway' : 'writable') : 'refused';
        const observed: Outcome = result !== 'ok' ? 'refused' : existsSync(file) ? 'writable' : 'throwaway';
        const refusal = explainPath(plan, file, 'write')?.message.replace(/^sandbox: /, '');
        rows.push({
          check: 'write',
          target: write.dir,
          label: write.label,
          expected,
          observed,
          rule:
            expected === 'throwaway'
              ? `writes land in a folder of the sandbox's own, gone when it ends: ${access.mount.rule}`
              : expected === 'writable'
                ? access.mount.rule
                : (refusal ?? access.mount.rule),
          ...(result === 'ok' ? {} : { detail: result }),
        });
      });
      rows.push({
        check: 'network',
        target: `127.0.0.1 on the host, directly`,
        label: 'network',
        expected: policy.network === true ? 'reachable' : 'refused',
        observed: seen.network === 'ok' ? 'reachable' : 'refused',
        rule: `network: ${Array.isArray(policy.network) ? 'allow-list (proxy only)' : String(policy.network)} (${policy.networkOrigin || `profile ${policy.profile}`})`,
        ...(seen.network === 'ok' ? {} : { detail: seen.network }),
      });
      for (const target of proxies) {
        const rule = Array.isArray(policy.network)
          ? policy.network.find(
              (r) => target === `${r.subdomains ? `tack-check.${r.host}` : r.host}:${r.port}`,
            )
          : undefined;
        const decision = decisions.find((d) => d.target === target);
        rows.push({
          check: 'proxy',
          target,
          label: rule ? 'allow-listed' : 'not listed',
          expected: rule ? 'allowed' : 'refused',
          observed: decision?.allowed ? 'allowed' : 'refused',
          rule: decision?.reason ?? (rule ? `${rule.written} (${rule.origin})` : 'not in the allow-list'),
          ...(decision ? {} : { detail: `the proxy saw no request (${seen.proxies[target] ?? 'not run'})` }),
        });
      }
      return rows;
    },
  };
}

/**
 * A file inside `dir` (or two levels down) to stat: a folder alone proves nothing, since a hidden folder can be
 * an empty stand-in or a mount point.
 */
function sample(dir: string, depth = 2): string | undefined {
  try {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name));
    const file = entries.find((entry) => entry.isFile());
    if (file) return join(dir, file.name);
    if (depth > 1)
      for (const entry of entries.filter((e) => e.isDirectory())) {
        const found = sample(join(dir, entry.name), depth - 1);
        if (found) return found;
      }
    return undefined;
  } catch {
    return undefined;
  }
}
