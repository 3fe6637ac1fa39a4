import type { RunningAgent } from '../agent/agent.js';
import { formatTokens } from './format.js';
import { connectingText, type ServerProgressRow } from './startup.js';
import type { TranscriptView } from './transcript-view.js';

/**
 * `/status`: the model, the session, the folder, the servers (or how far their start is), the tokens and cost,
 * and the notes the session gave at start in full (the first screen shows them as one line).
 */
export function statusText(state: {
  view: TranscriptView;
  agent: RunningAgent | undefined;
  cwd: string;
  progress: readonly ServerProgressRow[];
}): string {
  const { view, agent, cwd } = state;
  const status = view.status;
  const servers = agent?.host?.servers();
  const lines = [
    `model    ${status.model}`,
    `session  ${agent ? agent.session.id : 'starting'}`,
    `folder   ${cwd}`,
    `servers  ${
      !agent
        ? connectingText(state.progress)
        : servers && servers.length > 0
          ? servers.map((s) => `${s.name} ${s.status === 'connected' ? 'up' : s.status}`).join(', ')
          : 'none configured'
    }`,
    `tokens   ${formatTokens(status.inputTokens)} in, ${formatTokens(status.outputTokens)} out, $${status.costUsd.toFixed(4)}`,
  ];
  if (view.startNotes.length > 0) lines.push('', 'notes at start:', ...view.startNotes.map((n) => `- ${n}`));
  return lines.join('\n');
}
