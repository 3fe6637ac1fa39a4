import { accessOf, type MountPlan } from './mounts.js';

/**
 * A refused access shows up as the process's own error (EROFS, ENOENT, ECONNREFUSED): the sandbox does not
 * rewrite what the process says. tack reads its stderr and, when a line reports an error on a path or a
 * connection the policy refuses, explains it with the rule that refused it, for the server's log.
 */

/** Error shapes that name a path: Node, Python, coreutils and shells, bubblewrap's exec. */
const PATH_ERRORS: RegExp[] = [
  // EROFS: read-only file system, open '/x'   |   Error: ENOENT: no such file or directory, stat '/x'
  /\b(?<code>EROFS|EACCES|EPERM|ENOENT|ENOTDIR)\b[^'\n]*'(?<path>\/[^'\n]+)'/,
  // [Errno 30] Read-only file system: '/x'
  /\[Errno (?<errno>\d+)\][^'\n]*'(?<path>\/[^'\n]+)'/,
  // cannot create /x: Read-only file system   |   cat: /x: No such file or directory   |   bwrap: execvp /x: ...
  /['"]?(?<path>\/[^\s:'"]+)['"]?: (?<text>Read-only file system|No such file or directory|Permission denied|Operation not permitted)/,
];

const ERRNO: Record<string, string> = {
  '1': 'EPERM',
  '2': 'ENOENT',
  '13': 'EACCES',
  '20': 'ENOTDIR',
  '30': 'EROFS',
};
const TEXT: Record<string, string> = {
  'Read-only file system': 'EROFS',
  'No such file or directory': 'ENOENT',
  'Permission denied': 'EACCES',
  'Operation not permitted': 'EPERM',
};

const NETWORK_ERROR =
  /\b(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EAI_AGAIN|ENOTFOUND|getaddrinfo)\b|Network is unreachable|Temporary failure in name resolution|Name or service not known|Could not resolve host/;

export interface Refusal {
  /** What was refused: a path, or `network`. */
  subject: string;
  message: string;
}

/** The refusals one line of stderr reports, each explained; none when the line reports nothing the policy refused. */
export function explainLine(plan: MountPlan, line: string): Refusal[] {
  const refusals: Refusal[] = [];
  for (const pattern of PATH_ERRORS) {
    const match = pattern.exec(line);
    const groups = match?.groups;
    if (!groups?.path) continue;
    const code = groups.code ?? ERRNO[groups.errno ?? ''] ?? TEXT[groups.text ?? ''];
    const path = groups.path.replace(/[),.;]+$/, '');
    const refusal = explainPath(plan, path, code === 'EROFS' ? 'write' : 'any');
    if (refusal) refusals.push(refusal);
    break;
  }
  if (NETWORK_ERROR.test(line)) {
    const network = plan.policy.network;
    const origin = plan.policy.networkOrigin || `profile ${plan.policy.profile}`;
    if (network === false)
      refusals.push({
        subject: 'network',
        message: `sandbox: a network connection was refused: the sandbox has no network (network: false, ${origin})`,
      });
    else if (Array.isArray(network))
      refusals.push({
        subject: 'network',
        message: `sandbox: a network connection failed: only tack's proxy (HTTP_PROXY, HTTPS_PROXY) leads out, to ${network.map((r) => r.written).join(', ')} (${origin}); direct connections have no route`,
      });
  }
  return refusals;
}

/**
 * Why `path` is out of reach (hidden, or read-only for a write), naming the mount's rule; undefined when the
 * policy allows the access (the error is the process's own business then).
 */
export function explainPath(
  plan: MountPlan,
  path: string,
  access: 'read' | 'write' | 'any',
): Refusal | undefined {
  const found = accessOf(plan, path);
  if (!found.read)
    return {
      subject: path,
      message: `sandbox: ${path} is not visible: ${found.mount.rule}; name it in the sandbox's read or write list to allow it`,
    };
  if (access !== 'write' || found.write) return undefined;
  const writable = plan.mounts.filter((m) => m.kind === 'rw').map((m) => m.dest);
  const why =
    found.mount.kind === 'root'
      ? `it is outside every writable path (the root file system is read-only; writable: ${['/tmp', ...writable].join(', ')})`
      : `it is read-only (${found.mount.rule})`;
  return {
    subject: path,
    message: `sandbox: writing ${path} was refused: ${why}; name it in the sandbox's write list to allow it`,
  };
}
