import type { CallToolResult } from '@modelcontextprotocol/client';
import { renderBlock } from '../../mcp/content.js';
import { serverOfToolName } from '../../mcp/names.js';
import { printableJson } from '../../util/printable.js';
import { guardDefinition } from '../guard.js';
import { print, printErr, printJson } from '../output.js';
import { type GlobalOptions, parseJsonObject, withHost } from '../with-host.js';

export interface CallOptions extends GlobalOptions {
  /** Run a tool whose definition is held back (changed since approved, or flagged), this once. */
  allowChanged?: boolean;
}

export async function callCommand(
  tool: string,
  argsJson: string | undefined,
  options: CallOptions,
): Promise<number> {
  const args = parseJsonObject(argsJson, 'the tool arguments');
  const server = serverOfToolName(tool); // start that one server only
  return withHost(options, server ? [server] : undefined, async (host, signal, config) => {
    const entry = host.catalog.getTool(tool);
    // An unknown name falls through to callTool, which says so with the nearest names.
    if (entry)
      await guardDefinition(
        host,
        config,
        { server: entry.server, kind: 'tool', name: entry.definition.name },
        options.allowChanged === true,
      );
    const result = await host.callTool(tool, args, {
      signal,
      onProgress: ({ progress, total, message }) =>
        printErr(`progress: ${progress}${total ? `/${total}` : ''}${message ? ` ${message}` : ''}`),
    });
    if (options.json) printJson(result);
    else printResult(result);
    // A tool-level error is the tool's answer, printed in full; the exit code lets scripts notice it.
    return result.isError ? 1 : 0;
  });
}

function printResult(result: CallToolResult): void {
  if (result.isError) printErr('The tool reported an error (isError):');
  for (const block of result.content ?? []) print(renderBlock(block));
  if (result.structuredContent !== undefined) {
    print(`structuredContent:\n${printableJson(result.structuredContent, 2)}`);
  }
}
