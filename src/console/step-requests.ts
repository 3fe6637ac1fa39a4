import { rebuildStep, type StepRequest, stepRequest } from '../agent/session-requests.js';
import { readTranscript } from '../agent/transcript.js';
import { TackError } from '../errors.js';

/**
 * The most of a step's body the API answers with. A body grows with the history (a long session's last steps send
 * megabytes), and the page holds it in one `<pre>`; the CLI (`tack sessions show S --step N --request`) gives all.
 */
export const MAX_SHOWN_BODY_BYTES = 2 * 1024 * 1024;

/** GET /api/sessions/<id>/requests/<n>: step n's call as recorded, and its body rebuilt from the transcript. */
export interface StepRequestView {
  step: StepRequest;
  /** The body's text as sent, its first MAX_SHOWN_BODY_BYTES when longer. */
  body: string;
  /** The whole rebuilt body is byte for byte what the provider received (its SHA-256 matches). */
  exact: boolean;
  /** Hashes of the parts the transcript does not have: they stand as `null` in `body`. */
  missing: string[];
  /** Bytes of the body left out after the cap. */
  truncated?: number;
}

/** `text`'s first `max` UTF-8 bytes or fewer, never half a character, and how many bytes were left out. */
export function cutToBytes(text: string, max: number): { text: string; truncated?: number } {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return { text };
  const buffer = Buffer.from(text);
  let end = max;
  // A continuation byte (10xxxxxx) where the cut falls: back to the start of its character.
  while (end > 0 && ((buffer[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: buffer.subarray(0, end).toString('utf8'), truncated: bytes - end };
}

/**
 * Step `step` (1-based across the session, as stepRequests numbers them) of the transcript `file`; SESSION (404)
 * when the session has no such step.
 */
export async function stepRequestView(file: string, step: string): Promise<StepRequestView> {
  const { events } = readTranscript(file);
  const number = /^\d+$/.test(step) ? Number(step) : 0;
  const { step: request, steps } = await stepRequest(events, number);
  const rebuilt = request ? rebuildStep(events, number) : undefined;
  if (!request || !rebuilt)
    throw new TackError('SESSION', `the session has no step ${step}`, {
      hint:
        steps > 0
          ? `Its steps are 1 to ${steps}.`
          : 'It recorded no model calls (a transcript older than request records has none).',
    });
  const { text, truncated } = cutToBytes(rebuilt.text, MAX_SHOWN_BODY_BYTES);
  return {
    step: request,
    body: text,
    exact: rebuilt.exact,
    missing: rebuilt.missing,
    ...(truncated !== undefined ? { truncated } : {}),
  };
}
