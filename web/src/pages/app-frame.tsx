import { useEffect, useRef, useState } from 'preact/hooks';
import { post } from '../api';
import { callThroughGate } from '../calls';
import type { CallToolResult } from '../types';

interface Opened {
  viewId: string;
  src: string;
  uri: string;
  server: string;
  prefersBorder?: boolean;
  protocolVersion: string;
  tool: unknown;
}

type Message = { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, unknown> };

/**
 * An MCP App view (SEP-1865): the tool's `ui://` resource, served by the console from `/view/<id>` with the CSP
 * its metadata allows, in an iframe sandboxed to `allow-scripts` only: an opaque origin that cannot read this
 * page, its storage or its token. The page is the view's host: JSON-RPC over postMessage, accepted only from
 * this frame's window. Tool calls the view makes go through the server's approval gate (and the dialog).
 */
export function AppFrame(props: { tool: string; args: Record<string, unknown>; result: CallToolResult }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [opened, setOpened] = useState<Opened>();
  const [error, setError] = useState<string>();
  const [height, setHeight] = useState(240);
  const [log, setLog] = useState<string[]>([]);
  useEffect(() => {
    post<Opened>('/apps/open', { tool: props.tool }).then(setOpened, (e: Error) => setError(e.message));
  }, [props.tool]);
  useEffect(() => {
    if (!opened) return;
    const send = (message: Message) =>
      frame.current?.contentWindow?.postMessage({ jsonrpc: '2.0', ...message }, '*');
    const reply = (id: Message['id'], result: unknown) => send({ id, result } as Message);
    const fail = (id: Message['id'], code: number, message: string) =>
      send({ id, error: { code, message } } as Message);
    let initialized = false;
    const onMessage = async (event: MessageEvent) => {
      // Only the view's own window; its origin is opaque ("null"), so the window is what identifies it.
      if (event.source !== frame.current?.contentWindow) return;
      const message = event.data as Message;
      if (
        typeof message !== 'object' ||
        message === null ||
        message.jsonrpc !== '2.0' ||
        typeof message.method !== 'string'
      )
        return;
      const { id, method, params = {} } = message;
      try {
        switch (method) {
          case 'ui/initialize':
            return reply(id, {
              protocolVersion: opened.protocolVersion,
              hostInfo: { name: 'tack console', version: '1' },
              hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
              hostContext: {
                toolInfo: { tool: opened.tool },
                theme: 'light',
                displayMode: 'inline',
                availableDisplayModes: ['inline'],
                containerDimensions: { maxHeight: 800 },
                platform: 'web',
                locale: navigator.language,
              },
            });
          case 'ui/notifications/initialized':
            if (initialized) return;
            initialized = true;
            send({ method: 'ui/notifications/tool-input', params: { arguments: props.args } });
            send({
              method: 'ui/notifications/tool-result',
              params: props.result as unknown as Record<string, unknown>,
            });
            return;
          case 'ui/notifications/size-changed': {
            const h = Number(params.height);
            if (Number.isFinite(h)) setHeight(Math.min(2000, Math.max(60, Math.ceil(h))));
            return;
          }
          case 'notifications/message':
            setLog((l) => [
              ...l.slice(-19),
              `${String(params.level ?? 'info')}: ${JSON.stringify(params.data ?? '')}`,
            ]);
            return;
          case 'ping':
            return reply(id, {});
          case 'ui/request-display-mode':
            return reply(id, { mode: 'inline' });
          case 'tools/call': {
            const outcome = await callThroughGate(`/apps/${encodeURIComponent(opened.viewId)}/call`, {
              name: params.name,
              arguments: params.arguments ?? {},
            });
            if (outcome.status === 'done') return reply(id, outcome.result);
            return fail(id, -32_000, `refused: ${outcome.reason}`);
          }
          case 'resources/read':
            return reply(
              id,
              await post(`/apps/${encodeURIComponent(opened.viewId)}/read`, { uri: params.uri }),
            );
          default:
            if (id !== undefined) fail(id, -32_601, `${method} is not supported by the tack console`);
        }
      } catch (e) {
        if (id !== undefined) fail(id, -32_000, (e as Error).message);
      }
    };
    addEventListener('message', onMessage);
    return () => {
      removeEventListener('message', onMessage);
      if (initialized) send({ id: 'teardown', method: 'ui/resource-teardown', params: {} });
    };
  }, [opened, props.args, props.result]);
  if (error) return <p class="error">App view: {error}</p>;
  if (!opened) return <p class="muted">Loading the app view…</p>;
  return (
    <section class="app-view">
      <h2>
        App view <small class="muted">{opened.uri}</small>
      </h2>
      <iframe
        ref={frame}
        title={`MCP App ${opened.uri}`}
        src={opened.src}
        sandbox="allow-scripts"
        referrerpolicy="no-referrer"
        class={opened.prefersBorder === false ? 'borderless' : ''}
        height={height}
      />
      {log.length > 0 && <pre class="small">{log.join('\n')}</pre>}
    </section>
  );
}
