import type { TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import { serverIdentity } from '../mcp/definitions.js';
import { acceptPins, pinDiff } from '../security/pins.js';
import type { AuditFilter, AuditOutcome } from '../store/audit.js';
import type { PinRecord } from '../store/pins.js';
import type { TackStore } from '../store/store.js';
import type { Route } from './routes.js';

const OUTCOMES: readonly AuditOutcome[] = ['ok', 'tool-error', 'failed', 'cancelled', 'denied'];

function serverOf(identity: string, config: TackConfig): string {
  return (
    config.servers.find((s) => serverIdentity(s) === identity)?.name ?? identity.split(' ')[0] ?? identity
  );
}

/** Every held definition with its diff: what `tack pins diff` prints, one entry per record. */
export async function heldDefinitions(store: TackStore | undefined, config: TackConfig) {
  if (!store) return [];
  return (await store.pins.list())
    .filter((r): r is PinRecord & { pending: NonNullable<PinRecord['pending']> } => r.pending !== undefined)
    .map((r) => ({
      server: r.kind === 'skill' ? r.identity : serverOf(r.identity, config),
      identity: r.identity,
      kind: r.kind,
      name: r.name,
      status: r.sha256 ? 'changed' : 'flagged',
      reason: r.pending.reason,
      since: r.pending.since,
      sha256: r.pending.sha256,
      pinnedSha256: r.sha256 || undefined,
      diff: pinDiff(r),
    }));
}

/**
 * Accepts one held definition, and only the version the person reviewed: `tack pins accept --sha` semantics, so a
 * definition that changed again since the page showed it is not accepted (the page must show the new diff).
 */
export async function acceptHeld(
  store: TackStore | undefined,
  input: { identity?: unknown; kind?: unknown; name?: unknown; sha256?: unknown },
) {
  if (!store)
    throw new TackError('STORE_FAILED', 'the tack store could not be opened, so nothing can be pinned', {
      hint: 'Check that the state directory (TACK_HOME) is writable.',
    });
  const { identity, kind, name, sha256 } = input;
  if (typeof identity !== 'string' || typeof kind !== 'string' || typeof name !== 'string')
    throw new TackError('USAGE', 'identity, kind and name are required');
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{12,64}$/.test(sha256))
    throw new TackError('USAGE', 'sha256 (the reviewed version, at least 12 hex digits) is required');
  const accepted = await acceptPins(store.pins, identity, kind, name, sha256);
  if (accepted.length === 0)
    throw new TackError('USAGE', `nothing named "${name}" with sha256 ${sha256.slice(0, 12)} is held back`, {
      hint: 'The held version changed since you reviewed it: reload the security page and review it again.',
    });
  return accepted.map((r) => ({ kind: r.kind, name: r.name, sha256: r.pending!.sha256 }));
}

/** The project's trust verdict and what it holds back (what `tack trust` shows). */
export function projectTrust(config: TackConfig) {
  const state = config.projectTrust;
  return {
    projectRoot: config.projectRoot,
    verdict: state?.verdict,
    heldBack: state?.heldBack,
  };
}

export async function auditEntries(store: TackStore | undefined, query: URLSearchParams) {
  if (!store) return [];
  const outcome = query.get('outcome') ?? '';
  const filter: AuditFilter = {
    server: query.get('server') || undefined,
    tool: query.get('tool') || undefined,
    client: query.get('client') || undefined,
    outcome: OUTCOMES.includes(outcome as AuditOutcome) ? (outcome as AuditOutcome) : undefined,
  };
  const limit = Math.min(1000, Math.max(1, Number(query.get('limit')) || 200));
  return store.audit.query(filter, limit);
}

/** The security page: held definitions, scan findings, the trifecta and trust; accepting a pin; the audit log. */
export const securityRoutes: Route[] = [
  {
    method: 'GET',
    path: 'security',
    async json({ context }) {
      const { host, config } = context;
      const catalog = await context.catalogView();
      return {
        held: await heldDefinitions(host.store, config),
        findings: catalog.findings,
        trifecta: catalog.trifecta,
        trust: projectTrust(config),
        store: host.store !== undefined,
      };
    },
  },
  {
    method: 'POST',
    path: 'pins/accept',
    async json({ context, body }) {
      const accepted = await acceptHeld(context.host.store, await body());
      context.forgetCatalogView();
      return { accepted };
    },
  },
  {
    method: 'GET',
    path: 'audit',
    json: ({ context, query }) => auditEntries(context.host.store, query),
  },
];
