import type { Approver } from '../agent/approval.js';
import type { AgentEvent } from '../agent/events.js';
import type { DefinitionReviewer } from '../agent/held.js';
import type { AgentInteraction } from '../agent/interaction.js';
import type { McpHost } from '../mcp/host.js';
import { DialogQueue } from './dialogs.js';
import { ServerProgress } from './startup.js';
import { TranscriptView } from './transcript-view.js';

// Kept apart from run.ts (Ink, React): `tack chat` makes these and starts the session while Ink is still loading.

/** What the session is started with so the TUI sees its events and answers its questions. */
export interface ChatTui {
  view: TranscriptView;
  dialogs: DialogQueue;
  /** The session's events (startAgent's `onEvent`), drawn as they come. */
  onEvent(event: AgentEvent): void;
  approver: Approver;
  reviewer: DefinitionReviewer;
  interaction: AgentInteraction;
  /** The servers coming up while the session starts (startAgent's `onHost`), for the status line. */
  progress: ServerProgress;
  /** The host as it starts (startAgent's `onHost`): its servers' progress goes to `progress`. */
  onHost(host: McpHost): void;
  /** A warning while the session starts, shown in place (written past Ink, it would tear the frame). */
  onWarning(message: string): void;
}

/**
 * Made before the session starts: the events of its start (notices, held definitions) are shown too. `model`
 * (`provider:id`) is on the status line from the first frame, before the session says it.
 */
export function createChatTui(model = ''): ChatTui {
  const view = new TranscriptView(model);
  const dialogs = new DialogQueue();
  const progress = new ServerProgress();
  return {
    view,
    dialogs,
    onEvent: (event) => view.apply(event),
    approver: dialogs.approver,
    reviewer: dialogs.reviewer,
    interaction: dialogs.interaction,
    progress,
    onHost: (host) => progress.attach(host),
    onWarning: (message) => view.notice(`warning: ${message}`),
  };
}
