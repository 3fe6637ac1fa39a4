import type { ScriptOutcome } from './runtime.js';

/**
 * What the model gets of a script: its console output, then its return value or why it stopped. `tool` names
 * the tool that ran it in the error line (the harness's and the gateway's run_code both answer this way).
 */
export function renderOutcome(outcome: ScriptOutcome, tool: string): { text: string; isError: boolean } {
  const parts: string[] = [];
  if (outcome.logs.length > 0) parts.push(`console:\n${outcome.logs.join('\n')}`);
  const calls = `${outcome.calls} tool call${outcome.calls === 1 ? '' : 's'}`;
  if (outcome.status === 'ok') {
    parts.push(outcome.value === undefined ? 'result: (nothing returned)' : `result:\n${outcome.value}`);
    if (outcome.truncated) parts.push('[output cut at the output limit: return less, or filter more]');
    parts.push(`[${calls}]`);
    return { text: parts.join('\n'), isError: false };
  }
  const why =
    outcome.status === 'limit'
      ? `stopped: ${outcome.error}`
      : outcome.status === 'aborted'
        ? 'stopped: interrupted'
        : `the script failed: ${outcome.error}`;
  parts.unshift(`${tool}: ${why}`);
  parts.push(`[${calls} made before it stopped; their effects stay]`);
  return { text: parts.join('\n'), isError: true };
}
