import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** Whether this machine can run tack's sandbox, and with what; a reason and a hint when it cannot. */
export type SandboxSupport =
  | { available: true; tool: 'bubblewrap'; path: string; version: string }
  | { available: false; reason: string; hint: string };

/** The namespaces and flags every sandbox uses, checked once by running `true` in them. */
export const NAMESPACE_FLAGS = [
  '--die-with-parent',
  '--new-session',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--cap-drop',
  'ALL',
] as const;

const checked = new Map<string, Promise<SandboxSupport>>();

/**
 * Finds bubblewrap (`TACK_BWRAP`, else `bwrap` on the PATH) and runs `true` inside the namespaces tack uses, once
 * per process: a bwrap that exists but cannot create namespaces (user namespaces switched off, an AppArmor rule)
 * is no sandbox either. About 10 ms on Linux; elsewhere it answers at once.
 */
export function sandboxSupport(bwrap: string = process.env.TACK_BWRAP || 'bwrap'): Promise<SandboxSupport> {
  let result = checked.get(bwrap);
  if (!result) {
    result = check(bwrap);
    checked.set(bwrap, result);
  }
  return result;
}

async function check(bwrap: string): Promise<SandboxSupport> {
  if (process.platform !== 'linux')
    return {
      available: false,
      reason: `no supported sandbox on ${process.platform}: tack's sandbox is bubblewrap, on Linux (Seatbelt on macOS is not supported yet)`,
      hint: 'Run it on Linux, or set its sandbox to "required": false to start it unsandboxed with a warning.',
    };
  const path = findExecutable(bwrap);
  if (!path)
    return {
      available: false,
      reason: `bubblewrap is not installed (no ${bwrap}${isAbsolute(bwrap) ? '' : ' on the PATH'})`,
      hint: 'Install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or set TACK_BWRAP to its path.',
    };
  const [version, probe] = await Promise.all([
    run(path, ['--version']),
    run(path, [
      ...NAMESPACE_FLAGS,
      '--unshare-net',
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      'true',
    ]),
  ]);
  if (probe.error)
    return {
      available: false,
      reason: `${path} cannot create a sandbox here: ${probe.stderr.trim() || probe.error}`,
      hint: 'bubblewrap needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 an AppArmor profile for bwrap, or kernel.apparmor_restrict_unprivileged_userns=0).',
    };
  // The mount check that runs before every sandboxed command (mounts.ts identityCheck) is /bin/sh and awk.
  if (!findExecutable('/bin/sh') || !findExecutable('awk', '/usr/bin:/bin'))
    return {
      available: false,
      reason:
        "there is no /bin/sh, or no awk in /usr/bin or /bin: tack checks each sandbox's mounts with them before the command runs",
      hint: 'Install awk (Debian, Ubuntu: apt-get install mawk; Fedora: dnf install gawk).',
    };
  return {
    available: true,
    tool: 'bubblewrap',
    path,
    version: version.stdout.trim().replace(/^bubblewrap\s+/, '') || 'unknown',
  };
}

function run(file: string, args: string[]): Promise<{ stdout: string; stderr: string; error?: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, ...(error ? { error: error.message } : {}) }),
    );
  });
}

/** `command` as spawn would find it: a path as it is, else the first executable of that name on the PATH. */
export function findExecutable(
  command: string,
  path: string | undefined = process.env.PATH,
): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : (path ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
