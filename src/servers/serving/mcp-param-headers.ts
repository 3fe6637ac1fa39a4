/**
 * SEP-2243 `Mcp-Param-*` headers (2026-07-28 Streamable HTTP, "Custom Headers from Tool Parameters"), checked
 * for a server that serves tool definitions it did not build: the gateway.
 *
 * A tool marks an argument with `"x-mcp-header": "<Name>"` on a property of its `inputSchema`; a client mirrors
 * that argument into the `Mcp-Param-<Name>` header of its `tools/call` POST, so intermediaries can route on it
 * without parsing JSON-RPC. The server MUST check that the header agrees with the body: a body value without
 * its header, a header that decodes to another value, or a value that cannot be decoded is answered with HTTP
 * 400 and JSON-RPC error -32020 (HeaderMismatch), before the call runs. Values that are not plain visible
 * ASCII travel Base64-encoded as `=?base64?<payload>?=`; a header without both the prefix and the suffix is a
 * literal.
 *
 * Hand-written, mirroring the SDK's own check: @modelcontextprotocol/server runs it inside `createMcpHandler`
 * only for `McpServer` instances (through `McpServer.toolInputSchemaJson`, marked @internal), and its helpers
 * (`scanXMcpHeaderDeclarations`, `validateMcpParamHeaders` in core-internal's mcpParamHeaders.ts) are in a
 * private chunk, not in the package's exports. The gateway serves upstream JSON Schemas through the low-level
 * `Server`, so the SDK never runs the check for it. Keep this in step with that file when the SDK changes.
 */

/** The JSON-RPC error code for headers that disagree with the body (2026-07-28). */
export const HEADER_MISMATCH = -32020;

const PARAM_HEADER_PREFIX = 'Mcp-Param-';
const X_MCP_HEADER = 'x-mcp-header';
/** RFC 9110 §5.1 `token`: no spaces, control characters or delimiters. */
const RFC9110_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The spec admits string, integer and boolean; `number` is invalid, but the SDK still checks its headers. */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean', 'number']);
/** Where `x-mcp-header` may not appear: only a chain of `properties` reaches a declaration. */
const UNREACHABLE_KEYWORDS = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;
const NAME_VALUED_KEYWORDS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);
const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const BASE64_CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CANONICAL_DECIMAL = /^-?\d+(\.\d+)?$/;

/** One argument a tool mirrors into a header: where it sits in `arguments` and the header's suffix. */
export interface ParamHeaderDeclaration {
  path: readonly string[];
  headerName: string;
  type: string;
}

/** Why a request's `Mcp-Param-*` headers were refused: the header, and what disagreed. */
export interface ParamHeaderMismatch {
  header: string;
  detail: string;
}

const scanned = new WeakMap<object, readonly ParamHeaderDeclaration[] | undefined>();

/**
 * The `x-mcp-header` declarations of a tool's input schema, or undefined when the schema declares none or is
 * invalid (conforming clients leave an invalid tool out, so no header is expected for it). Cached per schema
 * object: the gateway keeps its served definitions per catalog.
 */
export function paramHeaderDeclarations(inputSchema: unknown): readonly ParamHeaderDeclaration[] | undefined {
  if (inputSchema === null || typeof inputSchema !== 'object') return undefined;
  if (scanned.has(inputSchema)) return scanned.get(inputSchema);
  const declarations = scan(inputSchema);
  const result = declarations?.length ? declarations : undefined;
  scanned.set(inputSchema, result);
  return result;
}

function scan(root: object): ParamHeaderDeclaration[] | undefined {
  const declarations: ParamHeaderDeclaration[] = [];
  const seen = new Set<string>();
  // false: the schema is invalid. Declarations under unreachable keywords are visited only to find that out.
  const visit = (node: unknown, path: string[], reachable: boolean): boolean => {
    if (node === null || typeof node !== 'object') return true;
    const schema = node as Record<string, unknown>;
    if (X_MCP_HEADER in schema) {
      const name = schema[X_MCP_HEADER];
      const type = typeof schema.type === 'string' ? schema.type : undefined;
      if (!reachable || path.length === 0) return false;
      if (typeof name !== 'string' || !RFC9110_TOKEN.test(name)) return false;
      if (type === undefined || !HEADER_TYPES.has(type)) return false;
      if (seen.has(name.toLowerCase())) return false;
      seen.add(name.toLowerCase());
      declarations.push({ path, headerName: name, type });
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === 'object') {
      for (const [key, child] of Object.entries(properties))
        if (!visit(child, [...path, key], reachable)) return false;
    }
    for (const keyword of UNREACHABLE_KEYWORDS) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : sub !== null && typeof sub === 'object' && NAME_VALUED_KEYWORDS.has(keyword)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) if (!visit(branch, [...path, `<${keyword}>`], false)) return false;
    }
    return true;
  };
  return visit(root, [], true) ? declarations : undefined;
}

/**
 * Compares the headers with the body's arguments: for each declaration whose argument has a value (not null),
 * the header must be there and decode to that value (numbers compare numerically, `42.0` equals `42`). A
 * header for an absent argument is ignored.
 */
export function checkParamHeaders(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
  headers: Headers,
): ParamHeaderMismatch | undefined {
  for (const declaration of declarations) {
    const header = `${PARAM_HEADER_PREFIX}${declaration.headerName}`;
    const body = valueAt(args, declaration.path);
    const expected = primitiveText(body);
    if (expected === undefined) continue;
    const where = declaration.path.join('.');
    const value = headers.get(header);
    if (value === null)
      return {
        header,
        detail: `the body carries ${where}=${JSON.stringify(body)} but the ${header} header is absent`,
      };
    const decoded = decodeParamValue(value);
    if (decoded === undefined)
      return { header, detail: `the ${header} header carries an invalid Base64 value (=?base64?...?=)` };
    const numeric =
      (declaration.type === 'integer' || declaration.type === 'number') &&
      typeof body === 'number' &&
      CANONICAL_DECIMAL.test(decoded);
    if (numeric ? Number(decoded) !== body : decoded !== expected)
      return {
        header,
        detail: `the ${header} header decodes to ${JSON.stringify(decoded)} but the body carries ${where}=${JSON.stringify(body)}`,
      };
  }
  return undefined;
}

/** The header text of a primitive argument; undefined for what is not mirrored (null, objects, unsafe numbers). */
function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
      return undefined;
    return String(value);
  }
  return undefined;
}

/** A header's value: the Base64 payload decoded as UTF-8, or the literal; undefined when it cannot be decoded. */
function decodeParamValue(value: string): string | undefined {
  if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX))) return value;
  const payload = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!BASE64_CANONICAL.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The HTTP side, for a 2026-07-28 POST before it reaches `createMcpHandler`: a `tools/call` whose tool
 * (`inputSchema` by the name it is served under) declares header parameters gets its headers compared with its
 * arguments, and a mismatch is answered here with 400 / -32020. Anything else resolves undefined and goes on
 * to the SDK, including requests whose standard headers (`Mcp-Method`, `Mcp-Name`) disagree with the body: the
 * SDK answers those first, as it does for its own servers. `message` is the body, parsed once for every check
 * (serving/http-entry.ts); a body that is not JSON is left to the SDK.
 */
export function paramHeaderCheck(
  inputSchema: (tool: string) => unknown,
): (request: Request, message: unknown) => Response | undefined {
  return (request, message) => {
    if (request.method.toUpperCase() !== 'POST') return undefined;
    if (request.headers.get('mcp-method')?.trim() !== 'tools/call') return undefined;
    const nameHeader = request.headers.get('mcp-name');
    const tool = nameHeader === null ? undefined : decodeParamValue(nameHeader.trim());
    if (tool === undefined) return undefined;
    const declarations = paramHeaderDeclarations(inputSchema(tool));
    if (!declarations) return undefined;
    if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
    const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
    const call = (params ?? {}) as { name?: unknown; arguments?: unknown };
    if (method !== 'tools/call' || call.name !== tool) return undefined;
    const mismatch = checkParamHeaders(declarations, call.arguments, request.headers);
    if (!mismatch) return undefined;
    return Response.json(
      {
        jsonrpc: '2.0',
        error: {
          code: HEADER_MISMATCH,
          message: `Bad Request: the request headers and body disagree: ${mismatch.detail}`,
          data: { mismatch: { header: mismatch.header, body: mismatch.detail } },
        },
        id: typeof id === 'string' || typeof id === 'number' ? id : null,
      },
      { status: 400 },
    );
  };
}
