/** What `within` saw: the work's value, or that the time ran out first. */
export type Within<T> = { done: true; value: T } | { done: false };

/**
 * Waits for `work` at most `ms`. The work is not cancelled when the time runs out: it finishes or fails on its own
 * (the race holds its rejection, so a late one never surfaces as unhandled). A rejection in time is thrown. The
 * timer never keeps the process alive.
 */
export async function within<T>(work: Promise<T> | T, ms: number): Promise<Within<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ done: false }>((resolve) => {
    timer = setTimeout(() => resolve({ done: false }), ms);
    timer.unref();
  });
  try {
    return await Promise.race([
      Promise.resolve(work).then((value) => ({ done: true as const, value })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
