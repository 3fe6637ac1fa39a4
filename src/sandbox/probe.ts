import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative } from 'node:path';
import type { SandboxPolicy } from '../config/sandbox.js';
import { runCapped } from '../util/run-capped.js';
import { compareText } from '../util/text-order.js';
import { explainPath } from './explain.js';
import { type EnforcedArgs, parseBwrapArgs } from './guarantees.js';
import { prepareLaunch, type SandboxStatus } from './launch.js';
import {
  accessOf,
  type MountPlan,
  type MountTableEntry,
  mountTable,
  type PlanSpec,
  realOrSelf,
} from './mounts.js';

/**
 * `tack sandbox check`: runs a small Node probe inside a policy, exactly as the server (or script) would run, and
 * compares what it could reach with what the policy says it may. Reads are stats (the probe learns no content),
 * writes create a file the host then looks for (a write that lands in a throwaway folder of the sandbox is told
 * apart from one that reaches the host), the network check connects to a port tack opens on the host's loopback,
 * and the proxy checks read the proxy's own decisions.
 */

export type Outcome =
  | 'visible'
  | 'hidden'
  | 'writable'
  | 'throwaway'
  | 'refused'
  | 'reachable'
  | 'allowed'
  /** A bind in the sandbox's own mount table: `as planned`, or what it shows instead. */
  | 'as planned'
  | 'missing'
  | 'other source';

export interface CheckRow {
  check: 'read' | 'write' | 'network' | 'proxy' | 'mount';
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
  /**
   * The process's own command line: its sandbox is planned from it exactly as at its start (its program and
   * executable bound the same way), and the probe runs in that sandbox instead of it. Absent: a bare policy.
   */
  command?: string;
  args?: readonly string[];
  readPaths?: PlanSpec['readPaths'];
  /** Its own state folder, when not the policy's (a skill script's is a folder of the policy's per skill). */
  stateDir?: string;
  note?: (message: string) => void;
}

const PROBE = `'use strict';
const fs = require('node:fs');
const net = require('node:net');
const http = require('node:http');
const input = JSON.parse(process.argv[1]);
const out = { reads: {}, writes: {}, network: undefined, proxies: {}, mounts: '' };
try { out.mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8'); } catch (e) { out.mounts = ''; }
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

/**
 * Runs the probe inside `policy`, in the sandbox the process of `spec.command` would get (the same mounts, the
 * same identity check), and reports every check against what the plan says: reads and writes the probe really
 * made, and the probe's own mount table against the binds given to bubblewrap.
 */
export async function checkSandbox(policy: SandboxPolicy, spec: CheckSpec): Promise<CheckReport> {
  const listener = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  const marker = `.tack-sandbox-check-${process.pid}-${Date.now()}`;
  let launch: Awaited<ReturnType<typeof prepareLaunch>> | undefined;
  const command = spec.command ?? process.execPath;
  const args = spec.args ?? [];
  let planned: ReturnType<typeof plannedChecks> | undefined;
  try {
    launch = await prepareLaunch(policy, {
      command,
      args,
      env: spec.env,
      cwd: spec.cwd,
      subject: spec.subject,
      note: spec.note ?? (() => {}),
      // The probe is a Node script: the Node running tack must be there too (bound alone when hidden).
      executables: [process.execPath],
      ...(spec.readPaths ? { readPaths: spec.readPaths } : {}),
      ...(spec.stateDir ? { stateDir: spec.stateDir } : {}),
    });
    const plan = launch.plan;
    if (!plan || launch.status.state !== 'enforced')
      return { status: launch.status, rows: [], mismatches: 0 };
    planned = plannedChecks(policy, plan, marker, {
      files: plan.commandFiles,
      exposed: launch.status.guarantees.exposed.map((e) => e.path),
      stateDir: spec.stateDir ?? policy.stateDir,
    });
    const probeArgs = launch.wrap([
      process.execPath,
      '-e',
      PROBE,
      '--',
      JSON.stringify({ ...planned.input, port }),
    ]);
    const run = await runCapped([launch.command, ...probeArgs], {
      cwd: launch.cwd,
      env: launch.env,
      timeoutMs: 30_000,
      maxOutputBytes: 4 * 1024 * 1024,
    });
    let seen: ProbeOutput;
    try {
      seen = JSON.parse(run.stdout) as ProbeOutput;
    } catch {
      throw new Error(
        `the probe did not report (exit ${run.exitCode ?? run.signal}): ${run.stderr.trim().split('\n').slice(-3).join(' ')}`,
      );
    }
    const enforced = parseBwrapArgs(probeArgs.slice(0, probeArgs.indexOf('--') + 1));
    const rows = [...planned.rows(plan, seen, launch.decisions()), ...mountRows(plan, enforced, seen.mounts)];
    return { status: launch.status, rows, mismatches: rows.filter((r) => r.expected !== r.observed).length };
  } finally {
    // What the probe wrote where it could (the host's side of the workspace, its state folder) goes.
    for (const file of planned?.input.writes ?? []) rmSync(file, { force: true });
    await launch?.close();
    listener.close();
  }
}

/**
 * Each bind given to bubblewrap, looked up in the probe's own /proc/self/mountinfo at its place and traced back to
 * the host path it shows (device and root, against the host's mount table): the table the process really has.
 */
function mountRows(plan: MountPlan, enforced: EnforcedArgs, mountinfo: string): CheckRow[] {
  const inside = mountTable(mountinfo);
  const host = mountTable();
  const rows: CheckRow[] = [];
  for (const mount of enforced.mounts) {
    if ((mount.flag !== '--ro-bind' && mount.flag !== '--bind') || mount.dest === '/') continue;
    const entry = inside.filter((m) => m.mountPoint === mount.dest).at(-1);
    const planned = plan.mounts.findLast((m) => m.dest === mount.dest && m.source === mount.source);
    const source = realOrSelf(mount.source!);
    const seenAt = entry ? hostPathsOf(entry, host) : [];
    const agrees = seenAt.includes(source);
    rows.push({
      check: 'mount',
      target: mount.dest,
      label: mount.flag === '--bind' ? 'writable bind' : 'read-only bind',
      expected: 'as planned',
      observed: !entry ? 'missing' : agrees ? 'as planned' : 'other source',
      rule: planned?.rule ?? `${mount.flag} ${mount.source}`,
      ...(entry && !agrees ? { detail: `shows ${seenAt[0] ?? `${entry.device} ${entry.root}`}` } : {}),
    });
  }
  return rows;
}

/**
 * The host paths a mount may show: each host mount of the same device whose root holds the mount's root (a device
 * mounted in several places on the host, as containers do, gives several names for one folder).
 */
function hostPathsOf(entry: MountTableEntry, host: readonly MountTableEntry[]): string[] {
  const out: string[] = [];
  for (const candidate of host) {
    if (candidate.device !== entry.device) continue;
    const rest = relative(candidate.root, entry.root);
    if (rest === '..' || rest.startsWith('../')) continue;
    out.push(join(candidate.mountPoint, rest));
  }
  return out;
}

interface ProbeOutput {
  reads: Record<string, string>;
  writes: Record<string, string>;
  network: string;
  proxies: Record<string, string>;
  mounts: string;
}

/** What to probe for this policy, and how to turn the probe's output into rows. */
function plannedChecks(
  policy: SandboxPolicy,
  plan: MountPlan,
  marker: string,
  extra: { files: readonly string[]; exposed: readonly string[]; stateDir: string },
) {
  const reads: Array<{ path: string; label: string }> = [];
  const writes: Array<{ dir: string; label: string }> = [];
  // A sample the plan does not bind on purpose: a file the guarantees list as reachable proves nothing hidden.
  const bound = (path: string) => extra.exposed.some((e) => path === e || path.startsWith(`${e}/`));
  for (const home of plan.homes) {
    const file = sample(home, 1, bound);
    if (file) reads.push({ path: file, label: 'home folder' });
    const ssh = join(home, '.ssh');
    if (existsSync(ssh)) reads.push({ path: sample(ssh) ?? ssh, label: 'SSH keys' });
    writes.push({ dir: home, label: 'home folder' });
  }
  reads.push({ path: sample(policy.workspace) ?? policy.workspace, label: 'workspace' });
  writes.push({ dir: policy.workspace, label: 'workspace' });
  writes.push({ dir: dirname(policy.workspace), label: 'outside the workspace' });
  for (const [i, rule] of policy.read.entries()) reads.push({ path: rule.path, label: `read[${i}]` });
  for (const file of extra.files) reads.push({ path: file, label: 'on the command line' });
  for (const path of extra.exposed)
    reads.push({ path: sample(path) ?? path, label: 'reachable, as its guarantees say' });
  for (const [i, rule] of policy.write.entries()) writes.push({ dir: rule.path, label: `write[${i}]` });
  writes.push({ dir: extra.stateDir, label: 'its state folder' });
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
        // Where the path really leads: the sandbox's root has the host's links (/home -> /var/home).
        const access = accessOf(plan, realOrSelf(read.path));
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
        const access = accessOf(plan, realOrSelf(write.dir));
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
function sample(dir: string, depth = 2, skip: (path: string) => boolean = () => false): string | undefined {
  try {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name));
    const file = entries.find((entry) => entry.isFile() && !skip(join(dir, entry.name)));
    if (file) return join(dir, file.name);
    if (depth > 1)
      for (const entry of entries.filter((e) => e.isDirectory())) {
        const found = sample(join(dir, entry.name), depth - 1, skip);
        if (found) return found;
      }
    return undefined;
  } catch {
    return undefined;
  }
}
