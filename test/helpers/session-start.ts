import { type RunningAgent, startAgent } from '../../src/agent/agent.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { providerEnv } from './fake-provider.js';
import type { TempProject } from './project.js';

/**
 * A session started in the project as `tack run` starts one (its servers, skills and pins), against the fake
 * provider at `url`; `look` sees it before it closes. Returns the notices the start gave.
 */
export async function sessionStart(
  p: TempProject,
  url: string,
  look: (agent: RunningAgent) => void = () => {},
): Promise<string[]> {
  const notices: string[] = [];
  const agent = await startAgent({
    config: p.load(),
    model: 'anthropic:claude-sonnet-4-5',
    env: { ...p.env, ...providerEnv({ url }) },
    cwd: p.dir,
    transcript: false,
    onEvent: (e: AgentEvent) => {
      if (e.type === 'notice') notices.push(e.text);
    },
  });
  try {
    look(agent);
  } finally {
    await agent.close();
  }
  return notices;
}
