import { sep } from 'node:path';
import type { TackConfig } from '../../config/load.js';
import { TackError } from '../../errors.js';
import { hostDefinitions, serverIdentity } from '../../mcp/definitions.js';
import { acceptPins, DefinitionGuard, guardOptions, pinDiff, scanPinnedText } from '../../security/pins.js';
import { openConfiguredStore } from '../../store/open.js';
import type { PinRecord } from '../../store/pins.js';
import type { TackStore } from '../../store/store.js';
import { pushAll } from '../../util/arrays.js';
import { describeFinding } from '../findings.js';
import { print, printJson, table } from '../output.js';
import { type GlobalOptions, loadCliConfig, withHost } from '../with-host.js';

export interface PinsOptions extends GlobalOptions {
  /** Connect the servers first: pin what is new and hold what changed, then list. */
  check?: boolean;
  /** Every project's pins, each with the projects it was seen in (default: the current project's). */
  all?: boolean;
}

type Status = 'pinned' | 'changed' | 'flagged';

function statusOf(record: PinRecord): Status {
  if (!record.pending) return 'pinned';
  return record.sha256 ? 'changed' : 'flagged';
}

/** `tack pins list [server] [--check]`: every pin, its status and, for held ones, why. Exit 1 when any is held. */
export async function pinsListCommand(server: string | undefined, options: PinsOptions): Promise<number> {
  if (options.check)
    await withHost(options, server ? [server] : undefined, async (host, _signal, config) => {
      if (!host.store) throw noStore();
      await new DefinitionGuard(host.store.pins, guardOptions(config, host.store)).reviewAll(
        hostDefinitions(host),
      );
    });
  return withStore(options, async (store, config) => {
    const seenIn = await store.pins.projects();
    const selected = await select(store, config, server);
    const records = options.all ? selected : selected.filter((r) => ofProject(r.identity, config, seenIn));
    const rows = records.map((r) => ({
      server: serverOf(r.identity, config),
      kind: r.kind,
      name: r.name,
      status: statusOf(r),
      sha256: r.sha256,
      pinnedAt: r.pinnedAt,
      ...(r.pending
        ? { pending: { sha256: r.pending.sha256, reason: r.pending.reason, since: r.pending.since } }
        : {}),
      identity: r.identity,
      projects: seenIn.get(r.identity) ?? [],
    }));
    if (options.json) printJson(rows);
    else if (rows.length === 0)
      print(
        options.all
          ? 'Nothing pinned yet: definitions are pinned the first time a session (or `tack pins list --check`) sees them.'
          : `Nothing pinned for this project (${config.projectRoot}) yet: definitions are pinned the first time a session (or \`tack pins list --check\`) sees them. \`tack pins list --all\` lists every project's.`,
      );
    else {
      const headers = ['SERVER', 'KIND', 'NAME', 'STATUS', 'SHA256', 'SINCE'];
      print(
        table(
          options.all ? [...headers, 'PROJECT'] : headers,
          rows.map((r) => {
            const cells = [
              r.server,
              r.kind,
              r.name || '-',
              r.status,
              (r.pending?.sha256 ?? r.sha256).slice(0, 12) || '-',
              (r.pending?.since ?? r.pinnedAt).slice(0, 19),
            ];
            // Pins older than the projects' notes were seen in no project tack knows of.
            if (options.all) cells.push(r.projects.join(', ') || '(not recorded)');
            return cells;
          }),
        ),
      );
      for (const r of rows.filter((x) => x.pending)) print(`\n${r.server}: ${r.pending!.reason}`);
      if (rows.some((r) => r.pending))
        print('\nReview with `tack pins diff <server>`, then `tack pins accept <server> [name]`.');
    }
    return rows.some((r) => r.pending) ? 1 : 0;
  });
}

/** `tack pins diff [server] [name]`: the pinned definition against the one held back, as a unified diff. */
export async function pinsDiffCommand(
  server: string | undefined,
  name: string | undefined,
  options: GlobalOptions,
): Promise<number> {
  return withStore(options, async (store, config) => {
    const seenIn = server === undefined ? await store.pins.projects() : undefined;
    const held = (await select(store, config, server)).filter(
      (r) =>
        r.pending &&
        (name === undefined || r.name === name) &&
        (seenIn === undefined || ofProject(r.identity, config, seenIn)),
    );
    // What the scan finds in the waiting version, each finding explained: the reviewer reads why, not only what.
    const findingsOf = (r: (typeof held)[number]) =>
      scanPinnedText(r.kind, serverOf(r.identity, config), r.pending!.definition, {
        scanBytes: config.limits.scanBytes,
      }).filter((f) => f.severity !== 'low');
    if (options.json)
      printJson(
        held.map((r) => ({
          server: serverOf(r.identity, config),
          kind: r.kind,
          name: r.name,
          reason: r.pending!.reason,
          diff: pinDiff(r),
          findings: findingsOf(r),
        })),
      );
    else if (held.length === 0) print('Nothing is held back.');
    else
      for (const r of held) {
        const findings = findingsOf(r);
        print(
          `${r.kind === 'skill' ? r.identity : serverOf(r.identity, config)}: ${r.pending!.reason}\n${pinDiff(r)}` +
            (findings.length
              ? `\nThe scan finds in the new version:\n${findings.flatMap((f) => describeFinding(f, '  ')).join('\n')}`
              : ''),
        );
      }
    return 0;
  });
}

/** `tack pins accept <server> [name]`: the held definitions become the pins; sessions offer them again. */
export async function pinsAcceptCommand(
  server: string,
  name: string | undefined,
  options: GlobalOptions & { kind?: string; sha?: string },
): Promise<number> {
  return withStore(options, async (store, config) => {
    const identities = [...new Set((await select(store, config, server)).map((r) => r.identity))];
    // Skills are pinned per folder: two held skills of one name (two projects) need the version named.
    const ambiguous: string[] = [];
    for (const identity of identities)
      if (
        (await store.pins.list(identity)).some(
          (r) => r.pending && r.kind === 'skill' && (name === undefined || r.name === name),
        )
      )
        ambiguous.push(identity);
    if (ambiguous.length > 1 && !options.sha)
      throw new TackError(
        'USAGE',
        `${ambiguous.length} held skills match: ${ambiguous.map((i) => i.slice(6)).join(', ')}`,
        {
          hint: 'Accept one with --sha <prefix> (`tack pins diff skill` shows each with its sha256).',
        },
      );
    const accepted: PinRecord[] = [];
    for (const identity of identities)
      pushAll(accepted, await acceptPins(store.pins, identity, options.kind, name, options.sha));
    if (accepted.length === 0)
      throw new TackError(
        'USAGE',
        `nothing of server "${server}"${name ? ` named "${name}"` : ''}${options.sha ? ` with sha256 ${options.sha}` : ''} is held back`,
        {
          hint: options.sha
            ? 'The held version changed since you reviewed it: run `tack pins diff` again.'
            : 'See what is held with `tack pins list`.',
        },
      );
    if (options.json)
      printJson(accepted.map((r) => ({ kind: r.kind, name: r.name, sha256: r.pending!.sha256 })));
    else
      for (const r of accepted)
        print(
          `accepted ${r.kind} ${r.name || '(instructions)'} of ${server} (sha256 ${r.pending!.sha256.slice(0, 12)})`,
        );
    return 0;
  });
}

async function withStore<T>(
  options: GlobalOptions,
  fn: (store: TackStore, config: TackConfig) => Promise<T>,
): Promise<T> {
  const config = await loadCliConfig(options);
  const store = await openConfiguredStore(config);
  try {
    return await fn(store, config);
  } finally {
    await store.close();
  }
}

/**
 * A configured server's records are those of its identity now; a server no longer configured (or pointed
 * elsewhere since) is still found by name, so old pins can be listed and accepted.
 */
async function select(
  store: TackStore,
  config: TackConfig,
  server: string | undefined,
): Promise<PinRecord[]> {
  const all = await store.pins.list();
  if (server === undefined) return all;
  const entry = config.servers.find((s) => s.name === server);
  const identity = entry ? serverIdentity(entry) : undefined;
  const mine = all.filter((r) => (identity ? r.identity === identity : r.identity.startsWith(`${server} `)));
  return mine;
}

/**
 * Whether a pinned identity belongs to the current project: seen in it, or one of its configured servers (user
 * servers included; pins older than the projects' notes are found so), or a skill in its folder or skill folders.
 */
function ofProject(
  identity: string,
  config: TackConfig,
  seenIn: ReadonlyMap<string, readonly string[]>,
): boolean {
  if (seenIn.get(identity)?.includes(config.projectRoot)) return true;
  if (config.servers.some((s) => serverIdentity(s) === identity)) return true;
  if (!identity.startsWith('skill ')) return false;
  const dir = identity.slice('skill '.length);
  return [config.projectRoot, ...config.skillFolders].some(
    (folder) => dir === folder || dir.startsWith(`${folder}${sep}`),
  );
}

function serverOf(identity: string, config: TackConfig): string {
  return (
    config.servers.find((s) => serverIdentity(s) === identity)?.name ?? identity.split(' ')[0] ?? identity
  );
}

function noStore(): TackError {
  return new TackError('STORE_FAILED', 'the tack store could not be opened, so nothing can be pinned', {
    hint: 'Check that the state directory (TACK_HOME) is writable.',
  });
}
