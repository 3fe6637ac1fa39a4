import { TackError } from '../../errors.js';
import { renderBlock } from '../../mcp/content.js';
import { guardDefinition } from '../guard.js';
import { print, printJson } from '../output.js';
import { type GlobalOptions, parseJsonObject, withHost } from '../with-host.js';

export async function promptCommand(
  server: string,
  name: string,
  argsJson: string | undefined,
  options: GlobalOptions & { allowChanged?: boolean },
): Promise<number> {
  const args = parseJsonObject(argsJson, 'the prompt arguments');
  const stringArgs: Record<string, string> = {};
  for (const [key, value] of Object.entries(args ?? {})) {
    if (typeof value !== 'string') {
      throw new TackError(
        'USAGE',
        `prompt argument "${key}" must be a string, got ${JSON.stringify(value)}`,
        {
          hint: 'MCP prompt arguments are strings.',
        },
      );
    }
    stringArgs[key] = value;
  }
  return withHost(options, [server], async (host, signal, config) => {
    await guardDefinition(host, config, { server, kind: 'prompt', name }, options.allowChanged === true);
    const result = await host.getPrompt(server, name, argsJson ? stringArgs : undefined, { signal });
    if (options.json) {
      printJson(result);
      return 0;
    }
    if (result.description) print(`# ${result.description}\n`);
    for (const message of result.messages) print(`${message.role}: ${renderBlock(message.content)}`);
    return 0;
  });
}
