import type { CompleteRequest, CompleteResult } from '@modelcontextprotocol/client';
import type { GatewayCore } from '../core.js';
import { wireError, withoutReservedMeta } from '../results.js';
import { templateTarget } from './resource-target.js';

/** completion/complete: forwarded to the server owning the prompt or template; nothing matches, no values. */
export async function complete(
  core: GatewayCore,
  params: CompleteRequest['params'],
  signal: AbortSignal,
): Promise<CompleteResult> {
  const names = (await core.view()).names;
  const { ref } = params;
  const prompt = ref.type === 'ref/prompt' ? names.prompts.get(ref.name) : undefined;
  const target = prompt
    ? { server: prompt.server, ref: { type: 'ref/prompt' as const, name: prompt.prompt.name } }
    : ref.type === 'ref/resource'
      ? templateTarget(core, names, ref.uri)
      : undefined;
  // Nothing matches: no completions, which a client must accept for any argument.
  if (!target) return { completion: { values: [] } };
  try {
    return withoutReservedMeta(
      await core.host.complete(target.server, { ...params, ref: target.ref }, { signal }),
    );
  } catch (error) {
    throw wireError(error);
  }
}
