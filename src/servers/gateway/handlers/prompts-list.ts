import type { ListPromptsResult } from '@modelcontextprotocol/client';
import type { GatewayCore } from '../core.js';

/** prompts/list: every served prompt of the current catalog (built once per catalog). */
export function listPrompts(core: GatewayCore): ListPromptsResult {
  const view = core.view();
  view.prompts ??= [...view.names.prompts].map(([name, { prompt }]) => ({ ...prompt, name }));
  return { prompts: view.prompts };
}
