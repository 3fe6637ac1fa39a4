import type { ListPromptsResult } from '@modelcontextprotocol/client';
import type { GatewayCore } from '../core.js';

/** prompts/list: every served prompt of the current catalog (built once per catalog). */
export async function listPrompts(core: GatewayCore): Promise<ListPromptsResult> {
  const view = await core.view();
  view.prompts ??= [...view.names.prompts].map(([name, { prompt }]) => ({ ...prompt, name }));
  return { prompts: view.prompts };
}
