import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Whether a session the index calls `running` is: still running (`live`), over (`ended`: its transcript has the
 * end the index has not caught up with), or `abandoned`: its process is gone without writing an end (SIGKILL, a
 * crash, a power cut; tack writes the end on every exit it sees, session.close()).
 */
export type Liveness = 'live' | 'ended' | 'abandoned';

/** What the transcript says about its last run, as sessionLiveness weighs it. */
export interface TranscriptFacts {
  /** A `session-end` came after the last `session-start`. */
  ended: boolean;
  /** The process and machine the last `session-start` recorded (absent in transcripts of older tack versions). */
  pid?: number | undefined;
  hostname?: string | undefined;
  /** When the transcript was last written (ms since the epoch). */
  writtenAt?: number | undefined;
}

/**
 * A transcript with no process recorded (an older tack's) counts as abandoned after this long without a line: a run
 * writes at every step, and one waiting longer than this (an approval left unanswered) is rare; its own process
 * is the better witness when it is recorded.
 */
export const QUIET_MS = 60 * 60 * 1000;

export interface LivenessProbe {
  now: number;
  /** This machine's name: a pid means something only on the machine that recorded it. */
  hostname: string;
  alive(pid: number): boolean;
}

export function sessionLiveness(status: string, facts: TranscriptFacts, probe: LivenessProbe): Liveness {
  if (status !== 'running' || facts.ended) return 'ended';
  if (facts.pid !== undefined && facts.hostname === probe.hostname)
    return probe.alive(facts.pid) ? 'live' : 'abandoned';
  if (facts.writtenAt !== undefined && probe.now - facts.writtenAt > QUIET_MS) return 'abandoned';
  return 'live';
}

/** Whether a process of this id exists (one of another user's answers EPERM: it exists). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function localProbe(): LivenessProbe {
  return { now: Date.now(), hostname: hostname(), alive: processAlive };
}

/**
 * The last run's facts from a transcript file, read from its end: the last `session-start` or `session-end`
 * line decides. A file that cannot be read has no facts (the quiet rule cannot apply either).
 */
export function transcriptFacts(file: string): TranscriptFacts {
  let text: string;
  let writtenAt: number;
  try {
    writtenAt = statSync(file).mtimeMs;
    text = readFileSync(file, 'utf8');
  } catch {
    return { ended: false };
  }
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end);
    end = start - 1;
    if (!line.includes('"type":"session-')) continue;
    let event: { type?: unknown; pid?: unknown; hostname?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      continue;
    }
    if (event.type === 'session-end') return { ended: true, writtenAt };
    if (event.type === 'session-start')
      return {
        ended: false,
        writtenAt,
        ...(typeof event.pid === 'number' ? { pid: event.pid } : {}),
        ...(typeof event.hostname === 'string' ? { hostname: event.hostname } : {}),
      };
  }
  return { ended: false, writtenAt };
}
