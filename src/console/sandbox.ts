import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TackError } from '../errors.js';
import { requestTarget } from '../util/request-target.js';
import type { AppView, AppViews } from './apps.js';
import { COMMON_HEADERS } from './http.js';

/**
 * The MCP Apps sandbox proxy (SEP-1865, "Sandbox proxy"): a second listener on 127.0.0.1, another port and so
 * another origin than the console's, serving one page per view at `/sandbox/<id>`. The console frames that page
 * (`sandbox="allow-scripts allow-same-origin"`, so it keeps the sandbox origin and its messages can be told
 * apart by origin); the page announces itself with `ui/notifications/sandbox-proxy-ready`, takes the view's HTML
 * from `ui/notifications/sandbox-resource-ready`, loads it in an inner `srcdoc` frame sandboxed to
 * `allow-scripts` (an opaque origin: no cookies, no storage, no access to the proxy or the console), and relays
 * every other message both ways. The view's document inherits the page's Content-Security-Policy, which is the
 * view's policy (apps.ts `viewCsp`).
 */
export interface SandboxServer {
  origin: string;
  urlOf(view: AppView): string;
  close(): Promise<void>;
}

const SANDBOX_PAGE = /^\/sandbox\/([A-Za-z0-9_-]{16,64})$/;

/**
 * The proxy's script. It trusts only its parent window at the console origin that opened the view, and only the
 * inner frame's window for the view; `ui/notifications/sandbox-*` messages are never relayed, so the view can
 * neither load another document nor pose as the proxy. The inner frame's sandbox is fixed here, whatever a
 * message says.
 */
function proxyScript(hostOrigin: string): string {
  return `(() => {
  'use strict';
  const HOST = ${JSON.stringify(hostOrigin)};
  if (window.parent === window) {
    document.body.textContent = 'This page relays an MCP App view for the tack console; it works only inside it.';
    return;
  }
  const reserved = (data) =>
    typeof data === 'object' && data !== null && typeof data.method === 'string' &&
    data.method.startsWith('ui/notifications/sandbox-');
  let inner;
  addEventListener('message', (event) => {
    if (event.source === window.parent) {
      if (event.origin !== HOST) return;
      const data = event.data;
      if (reserved(data)) {
        if (data.method !== 'ui/notifications/sandbox-resource-ready' || inner) return;
        const html = data.params && data.params.html;
        if (typeof html !== 'string') return;
        inner = document.createElement('iframe');
        inner.setAttribute('sandbox', 'allow-scripts');
        inner.setAttribute('referrerpolicy', 'no-referrer');
        inner.setAttribute('title', 'MCP App view');
        inner.srcdoc = html;
        document.body.appendChild(inner);
        return;
      }
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(data, '*');
      return;
    }
    if (inner && event.source === inner.contentWindow && !reserved(event.data))
      window.parent.postMessage(event.data, HOST);
  });
  window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} }, HOST);
})();`;
}

/** The proxy page: a script and a full-size frame, nothing of the view until the console sends it. */
export function sandboxPage(view: AppView): string {
  // `</` cannot end the script early: the origin is the only data in it, JSON with `<` escaped.
  const script = proxyScript(view.hostOrigin).replace(/</g, '\\u003c');
  return `<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>MCP App sandbox</title>
<style>html,body{margin:0;height:100%;overflow:hidden}iframe{display:block;border:0;width:100%;height:100%}</style>
</head><body><script>${script}</script></body></html>`;
}

export async function startSandbox(views: AppViews): Promise<SandboxServer> {
  let port = 0;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    // DNS rebinding: only this listener's own names; a page elsewhere may frame it but learns nothing without
    // a view id, and the page's frame-ancestors names the one console origin that opened the view.
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      res.writeHead(403, { ...COMMON_HEADERS, 'content-type': 'text/plain' }).end('Forbidden host\n');
      return;
    }
    const url = requestTarget(req.url);
    const match =
      url && (req.method === 'GET' || req.method === 'HEAD') ? SANDBOX_PAGE.exec(url.pathname) : null;
    const view = match ? views.get(match[1]!) : undefined;
    if (!view) {
      res.writeHead(404, { ...COMMON_HEADERS, 'content-type': 'text/plain' }).end('Not found\n');
      return;
    }
    res.writeHead(200, {
      ...COMMON_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': view.csp,
      'cache-control': 'no-store',
    });
    res.end(sandboxPage(view));
  };
  const server = createServer(handle);
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new TackError(
          'USAGE',
          `cannot listen on 127.0.0.1 for the MCP Apps sandbox: ${error.code ?? error.message}`,
        ),
      ),
    );
    server.listen(0, '127.0.0.1', resolveListen);
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    urlOf: (view) => `${origin}/sandbox/${view.id}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
