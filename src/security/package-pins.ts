import { type Finding, PACKAGE_CODE } from './scan.js';

/**
 * A server's package as the scan weighs it: which runner fetches it, what the command line asks for, whether that
 * names one version (mcp/package-runner.ts PackageRunnerSpec) and, when known, the version that ran.
 */
export interface VettedPackage {
  runner: string;
  package: string;
  requested: string;
  pinned: 'exact' | 'digest' | false;
  version?: string | undefined;
}

/** The command line that fixes what an unpinned spec resolved to (`npx -y pkg@1.2.3`), for the finding's fix. */
export function pinnedCommand(pkg: Pick<VettedPackage, 'runner' | 'package' | 'version'>): string {
  const v = pkg.version ?? 'X.Y.Z';
  switch (pkg.runner) {
    case 'uvx':
      return `uvx ${pkg.package}==${v}`;
    case 'docker':
      return `docker run ${pkg.package}@sha256:<digest>`;
    case 'npx':
      return `npx -y ${pkg.package}@${v}`;
    default:
      return `${pkg.runner} ${pkg.package}@${v}`;
  }
}

/**
 * `unpinned-package` (medium): the server's command fetches a package without fixing its version, so its code can
 * change on any start while every pin of its definitions holds. Undefined when the command pins it.
 */
export function unpinnedPackageFinding(server: string, pkg: VettedPackage): Finding | undefined {
  if (pkg.pinned) return undefined;
  const ran = pkg.version ? `; ${pkg.package}@${pkg.version} ran at the last start` : '';
  const moves =
    pkg.runner === 'docker'
      ? 'the image tag can be moved to another image'
      : `${pkg.runner} fetches whatever version the registry offers then`;
  return {
    code: PACKAGE_CODE,
    severity: 'medium',
    location: { kind: 'server', server, field: 'command' },
    message: `${pkg.requested} names no fixed version: ${moves}${ran}. Pin it: ${pinnedCommand(pkg)}`,
    match: pkg.requested,
  };
}
