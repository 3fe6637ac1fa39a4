/**
 * The console's one way to the server: the session token from the page URL as a bearer header on every
 * request (never a cookie, so no other page can make the browser send it), JSON in and out.
 */
const token = new URLSearchParams(location.search).get('token') ?? '';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly hint?: string,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/api${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const value = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    const error = (value as { error?: { message?: string; hint?: string } } | undefined)?.error;
    throw new ApiError(
      error?.message ?? `${response.status} ${response.statusText}`,
      response.status,
      error?.hint,
    );
  }
  return value as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown) => request<T>('POST', path, body);

/**
 * Server-sent events read with fetch (EventSource cannot send the bearer header). Calls `onEvent` per `data:`
 * message until the stream ends or `signal` aborts.
 */
export async function stream(
  path: string,
  onEvent: (data: unknown) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await fetch(`/api${path}`, { headers: { authorization: `Bearer ${token}` }, signal });
  if (!response.ok || !response.body) throw new ApiError(`${response.status}`, response.status);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const messages = buffer.split('\n\n');
    buffer = messages.pop() ?? '';
    for (const message of messages)
      for (const line of message.split('\n'))
        if (line.startsWith('data: ')) onEvent(JSON.parse(line.slice(6)) as unknown);
  }
}

export const q = encodeURIComponent;
