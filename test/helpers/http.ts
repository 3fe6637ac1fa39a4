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
