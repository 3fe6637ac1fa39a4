import { useMemo } from 'react';
import type { RunningAgent } from '../agent/agent.js';
import { connectingText, type ServerProgress } from './startup.js';
import type { TranscriptView } from './transcript-view.js';

/**
 * The status line's servers and tools: `servers 2 up 1 down`, `12 tools` (or how many of the catalog's are
 * loaded when tools are deferred); while the session starts, each server as it comes up.
 */
export function useStatusFigures(
  agent: RunningAgent | undefined,
  view: TranscriptView,
  running: boolean,
  progress: ServerProgress | undefined,
): { servers: string; tools: string } {
  // What asks the session and the host: once per change of the view, not per keystroke.
  // biome-ignore lint/correctness/useExhaustiveDependencies: view.version and running are what say they changed.
  const figures = useMemo(() => {
    if (!agent) return undefined;
    const host = agent.host;
    const servers = host?.servers() ?? [];
    const up = servers.filter((s) => s.status === 'connected').length;
    const down = servers.filter((s) => s.status === 'failed').length;
    const tools = agent.session.tools();
    const mcpTools = tools.filter((t) => t.server).length;
    return {
      servers: servers.length > 0 ? `servers ${up} up${down > 0 ? ` ${down} down` : ''}` : '',
      tools: agent.session.deferringTools
        ? `tools ${mcpTools}/${host?.catalog.tools.length ?? 0} loaded`
        : `${tools.length} tools`,
    };
  }, [agent, view.version, running]);
  // While the session starts: a few snapshots a frame, no session to ask yet.
  return figures ?? { servers: connectingText(progress?.rows() ?? []), tools: '' };
}
