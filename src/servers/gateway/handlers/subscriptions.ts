import type { Server } from '@modelcontextprotocol/server';
import { trackSubscriptions } from '../../serve.js';
import type { GatewayCore } from '../core.js';
import { resourceTarget } from './resource-target.js';

/**
 * A 2025-era client subscribes per URI; the gateway watches the upstream resource for as long as it does. (A
 * 2026-07-28 client names URIs in its listen filter, which the SDK keeps to itself: not forwarded.) Unwatching
 * uses the target that was watched, whatever the catalog says by then; everything is unwatched on close.
 */
export function forwardSubscriptions(core: GatewayCore, server: Server, era: 'modern' | 'legacy'): void {
  const host = core.host;
  const watching = new Map<string, { server: string; uri: string }>();
  trackSubscriptions(server, era, (uri, subscribed) => {
    if (subscribed) {
      const target = watching.has(uri) ? undefined : resourceTarget(core, core.names(), uri);
      if (!target) return;
      watching.set(uri, target);
      // A watch that failed counted nothing upstream, so there is nothing to unwatch later.
      host.watchResource(target.server, target.uri).catch(() => {
        if (watching.get(uri) === target) watching.delete(uri);
      });
      return;
    }
    const target = watching.get(uri);
    if (target && watching.delete(uri)) void host.unwatchResource(target.server, target.uri).catch(() => {});
  });
  server.onclose = () => {
    // unwatchResource is async: a target that cannot be unwatched rejects alone, and the others still go.
    for (const target of watching.values())
      void host.unwatchResource(target.server, target.uri).catch(() => {});
    watching.clear();
  };
}
