import { useStdout } from 'ink';
import { useEffect, useState } from 'react';
import type { DialogQueue } from './dialogs.js';
import type { ServerProgress } from './startup.js';
import type { TranscriptView } from './transcript-view.js';

/** Redraws at most this often while events stream in (a token per event would redraw per token). */
const FRAME_MS = 33;
/** The running line's clock ticks this often. */
const TICK_MS = 1000;

/**
 * Draws the chat again when what it shows changes outside React: the transcript's events (at most once a frame),
 * a dialog opened or answered, a server coming up, and the running line's clock while a turn runs. Returns a
 * function that draws again now.
 */
export function useRedraw(
  view: TranscriptView,
  dialogs: DialogQueue,
  progress: ServerProgress | undefined,
  running: boolean,
): () => void {
  const [, setFrame] = useState(0);

  // Events arrive per token; the screen follows at most once a frame.
  useEffect(() => {
    let timer: NodeJS.Timeout | undefined;
    const redraw = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        setFrame((n) => n + 1);
      }, FRAME_MS);
    };
    const offView = view.subscribe(redraw);
    const offDialogs = dialogs.subscribe(() => setFrame((n) => n + 1));
    const offProgress = progress?.subscribe(redraw);
    return () => {
      offView();
      offDialogs();
      offProgress?.();
      if (timer) clearTimeout(timer);
    };
  }, [view, dialogs, progress]);

  // The running line's clock: a frame a second while a turn runs.
  useEffect(() => {
    if (!running) return;
    const tick = setInterval(() => setFrame((n) => n + 1), TICK_MS);
    return () => clearInterval(tick);
  }, [running]);

  return () => setFrame((n) => n + 1);
}

/** The terminal's size, followed as it is resized. */
export function useTerminalSize(): { width: number; rows: number } {
  const { stdout } = useStdout();
  const [width, setWidth] = useState(stdout.columns || 80);
  const [rows, setRows] = useState(stdout.rows || 24);
  useEffect(() => {
    const onResize = () => {
      setWidth(stdout.columns || 80);
      setRows(stdout.rows || 24);
    };
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return { width, rows };
}
