import { metering } from '../../telemetry/api.js';
import { inSpan } from '../../telemetry/spans.js';
import { VERSION } from '../../version.js';

interface Instruments {
  provider: unknown;
  duration: { record(value: number, attributes: Record<string, string>): void };
  calls: { add(value: number, attributes: Record<string, string>): void };
}

let instruments: Instruments | undefined;

/** The gateway's instruments, bound to the meter provider registered now (a later start registers another). */
function meters(): Instruments | undefined {
  const api = metering();
  if (!api) return undefined;
  const provider = api.metrics.getMeterProvider();
  if (instruments?.provider !== provider) {
    const meter = provider.getMeter('tack', VERSION);
    instruments = {
      provider,
      duration: meter.createHistogram('mcp.server.operation.duration', {
        unit: 's',
        description: 'How long the gateway took to answer an MCP request, upstream call included.',
      }),
      calls: meter.createCounter('tack.gateway.calls', { description: 'Tool calls the gateway served.' }),
    };
  }
  return instruments;
}

/**
 * One SERVER span (and its metrics) per tool call the gateway serves, named and attributed after the MCP semantic
 * conventions (`tools/call <tool>`, mcp.method.name, gen_ai.tool.name); the upstream request is its CLIENT child
 * (mcp/requests.ts). No arguments or results are recorded: they may hold secrets.
 */
export function tracedToolCall<T>(
  attributes: { tool: string; server: string; upstreamTool: string; era: string; transport: string },
  work: () => Promise<T>,
  outcomeOf: (result: T) => string,
): Promise<T> {
  const started = performance.now();
  return inSpan(
    `tools/call ${attributes.tool}`,
    {
      kind: 'server',
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': attributes.tool,
        'tack.upstream.server': attributes.server,
        'tack.upstream.tool': attributes.upstreamTool,
        'mcp.protocol.era': attributes.era,
        'network.transport': attributes.transport === 'http' ? 'tcp' : 'pipe',
      },
    },
    async (span) => {
      let outcome = 'failed';
      try {
        const result = await work();
        outcome = outcomeOf(result);
        span.outcome(outcome);
        return result;
      } finally {
        span.set({ 'tack.outcome': outcome });
        const labels = {
          'mcp.method.name': 'tools/call',
          'tack.upstream.server': attributes.server,
          'tack.outcome': outcome,
        };
        const m = meters();
        m?.duration.record((performance.now() - started) / 1000, labels);
        m?.calls.add(1, labels);
      }
    },
  );
}
