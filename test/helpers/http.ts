/** The headers every MCP Streamable HTTP POST carries. */
const MCP_POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A raw JSON-RPC message POSTed to an MCP endpoint, `headers` added to (or overriding) the MCP ones. */
export function postJsonRpc(
  url: string | URL,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...MCP_POST_HEADERS, ...headers },
    body: JSON.stringify(message),
  });
}

/** The headers of a 2025-era session opened by hand (initialize, then initialized), for raw POSTs in that era. */
export async function legacySession(url: string, client = 'raw-client'): Promise<Record<string, string>> {
  const init = await postJsonRpc(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: client, version: '1' } },
  });
  await init.text();
  const session = init.headers.get('mcp-session-id');
  if (!session) throw new Error(`no Mcp-Session-Id from ${url} (status ${init.status})`);
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  await (await postJsonRpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).text();
  return headers;
}
