import type { GetPromptResult } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Downstream, GatewayCore } from '../core.js';
import type { RequestContext } from '../interaction.js';
import { wireError, withoutReservedMeta } from '../results.js';
import { resumes, runExchange } from './run-exchange.js';

/** prompts/get: the upstream prompt the served name stands for, as an exchange; links in it renamed. */
export async function getPrompt(
  core: GatewayCore,
  downstream: Downstream,
  ctx: RequestContext,
  params: { name: string; arguments?: Record<string, string> | undefined },
): Promise<GetPromptResult> {
  const names = (await core.view()).names;
  const key = `prompts/get ${params.name}`;
  const target = names.prompts.get(params.name);
  if (!target && !resumes(core, ctx, downstream.era))
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${params.name}`);
  return (await runExchange(
    core,
    downstream,
    ctx,
    key,
    target && {
      server: target.server,
      request: { method: 'prompts/get', name: target.prompt.name, arguments: params.arguments },
      key,
      finish: (result) => {
        const done = withoutReservedMeta(result as GetPromptResult);
        return {
          ...done,
          messages: done.messages.map((m) => ({
            ...m,
            content: names.content(target.server, [m.content])[0]!,
          })),
        };
      },
      fail: (error) => {
        throw wireError(error);
      },
    },
  )) as GetPromptResult;
}
