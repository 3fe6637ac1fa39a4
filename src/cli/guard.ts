import type { TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import { hostDefinitions } from '../mcp/definitions.js';
import type { McpHost } from '../mcp/host.js';
import { heldWhy } from '../security/held.js';
import { DefinitionGuard, guardOptions, type HeldDefinition, type PinKind } from '../security/pins.js';
import { describeFinding } from './findings.js';
import { warn } from './output.js';

/**
 * The definition guard on the one-shot paths (`tack call`, `tack prompt`, `tack read`), as sessions and `tack serve`
 * apply it: the servers' definitions are reviewed (new ones pinned, changed or flagged ones held), and a held
 * definition is not used: the command says why and refuses, unless `--allow-changed` runs it this once (with a
 * warning; the pin is left as it was, still waiting for review).
 */
export async function guardDefinition(
  host: McpHost,
  config: TackConfig,
  target: { server: string; kind: PinKind; name: string },
  allowChanged: boolean,
): Promise<void> {
  if (!host.store) {
    warn('the tack store is not open: definitions are neither pinned nor checked for changes');
    return;
  }
  const guard = new DefinitionGuard(host.store.pins, guardOptions(config, host.store));
  const review = await guard.reviewAll(
    hostDefinitions(host, host.catalog, {
      resources: target.kind === 'resource' || target.kind === 'resource-template',
    }),
  );
  const held = review.held.find(
    (h) => h.server === target.server && h.kind === target.kind && h.name === target.name,
  );
  if (!held) return;
  if (allowChanged) {
    warn(`running a held ${held.kind} anyway (--allow-changed): ${held.reason}`);
    return;
  }
  throw heldError(held);
}

function heldError(held: HeldDefinition): TackError {
  const what = `${held.kind === 'resource-template' ? 'resource template' : held.kind} ${held.name}`;
  // The same words as the harness and the gateway (security/held.ts), with the digests a person compares.
  const why =
    held.why === 'changed'
      ? `${heldWhy(held)} (sha256 ${held.pinnedSha256?.slice(0, 12)} -> ${held.sha256.slice(0, 12)})`
      : heldWhy(held);
  // One held with its server's package is accepted with the package.
  const accepted = held.via ?? held;
  const findings = held.findings.filter((f) => f.severity === 'high' || f.severity === 'medium');
  return new TackError('DEFINITION_HELD', `${what} of ${held.server} is held back: ${why}`, {
    subject: { server: held.server, ...(held.kind === 'tool' ? { tool: held.name } : {}) },
    details: findings.flatMap((f) => describeFinding(f, '')).slice(0, 40),
    hint: `Review it with \`tack pins diff ${held.server}\`, accept it with \`tack pins accept ${held.server} ${accepted.name}${held.via ? ` --kind ${accepted.kind}` : ''} --sha ${held.sha256.slice(0, 12)}\`, or run this once with --allow-changed.`,
  });
}
