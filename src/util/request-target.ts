/**
 * An HTTP request's target as a URL, or undefined when it is none. Node's parser lets an absolute-form target that
 * is no URL through (`GET http://[/mcp`); `new URL` throws on it, and thrown from a request handler nobody awaits
 * that would end the process before any check ran (tack serve, the console and the OAuth callback all had it).
 */
export function requestTarget(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', 'http://127.0.0.1');
  } catch {
    return undefined;
  }
}
