import { mcpAgentTools, mcpToolSecurity, withSandboxFacts } from '../../agent/toolset.js';
import { hostDefinitions } from '../../mcp/definitions.js';
import { describeStatus } from '../../sandbox/launch.js';
import { trifectaLegs } from '../../security/capabilities.js';
import { scanCatalog } from '../../security/catalog.js';
import { DefinitionGuard, guardOptions } from '../../security/pins.js';
import { TOOL_TOKENS_BASIS, tokenCounting, toolDefinitionsTokens } from '../../tokens/count.js';
import { describeFinding } from '../findings.js';
import { print, printJson, table, truncate } from '../output.js';
import { type ServerOptions, withHost } from '../with-host.js';

export async function toolsCommand(options: ServerOptions): Promise<number> {
  return withHost(options, options.server ? [options.server] : undefined, async (host, _signal, config) => {
    const tools = host.catalog.tools;
    // Priced as a session sends them (schemas mended for providers), so `tack context` shows the same figures.
    const sent = mcpAgentTools(host, new Map(config.servers.map((s) => [s.name, s])), tools);
    // In the configured model's tokens (an estimate where no tokenizer is known), counted once per definition ever:
    // the store remembers, so a warm listing loads no tokenizer.
    const model = config.agent.model;
    const counting = tokenCounting(model);
    const counts = await toolDefinitionsTokens(sent, host.store?.tokenCounts, model);
    const rows = tools.map((tool, i) => ({
      name: tool.name,
      server: tool.server,
      tool: tool.definition.name,
      title: tool.definition.title ?? tool.definition.annotations?.title ?? '',
      description: tool.definition.description ?? '',
      tokens: counts[i]!,
    }));
    const perServer: Record<string, { tools: number; tokens: number }> = {};
    for (const row of rows) {
      const total = perServer[row.server] ?? { tools: 0, tokens: 0 };
      perServer[row.server] = total;
      total.tools++;
      total.tokens += row.tokens;
    }
    const overall = { tools: rows.length, tokens: rows.reduce((sum, row) => sum + row.tokens, 0) };
    if (options.json) {
      printJson({
        tokenizer: counting.tokenizer,
        counted: TOOL_TOKENS_BASIS,
        tools: rows,
        totals: { servers: perServer, overall },
      });
      return 0;
    }
    if (rows.length === 0) {
      print('No tools: no server is connected, or none offers tools.');
      return 0;
    }
    print(
      table(
        ['TOOL', 'TITLE', 'DESCRIPTION', 'TOKENS'],
        rows.map((row) => [
          row.name,
          truncate(row.title, 24),
          truncate(row.description, 60),
          String(row.tokens),
        ]),
      ),
    );
    print('');
    print(
      table(
        ['SERVER', 'TOOLS', 'TOKENS'],
        [
          ...Object.entries(perServer).map(([server, t]) => [server, String(t.tools), String(t.tokens)]),
          ['total', String(overall.tools), String(overall.tokens)],
        ],
      ),
    );
    print(`\nTOKENS (${counting.label}): ${TOOL_TOKENS_BASIS}, as \`tack context\` counts them.`);
    return 0;
  });
}

/**
 * `tack tools --security`: each tool's capability labels with where each came from (config, trusted annotation,
 * default guess and what matched), its pin status (the servers' definitions are reviewed as a session would:
 * new ones pinned, changed or flagged ones held), and which tools hold each leg of the lethal trifecta.
 */
export async function toolsSecurityCommand(options: ServerOptions): Promise<number> {
  return withHost(options, options.server ? [options.server] : undefined, async (host, _signal, config) => {
    const guard = host.store && new DefinitionGuard(host.store.pins, guardOptions(config, host.store));
    const held = guard ? (await guard.reviewAll(hostDefinitions(host))).held : [];
    const settings = withSandboxFacts(new Map(config.servers.map((s) => [s.name, s])), host);
    // The poisoning scan of every tool as `tack scan` sees it (the catalog checks included), explained.
    const scans = scanCatalog(
      host.catalog.tools.map((t) => ({
        server: t.server,
        name: t.definition.name,
        ...(t.definition.title ? { title: t.definition.title } : {}),
        ...(t.definition.description ? { description: t.definition.description } : {}),
        inputSchema: t.definition.inputSchema,
        ...(t.definition.outputSchema ? { outputSchema: t.definition.outputSchema } : {}),
        ...(t.definition.annotations ? { annotations: t.definition.annotations } : {}),
      })),
      { scanBytes: config.limits.scanBytes },
    );
    const rows = host.catalog.tools.map((tool, i) => {
      const hold = held.find(
        (h) => h.kind === 'tool' && h.server === tool.server && h.name === tool.definition.name,
      );
      const { labels, ruledOut } = mcpToolSecurity(tool, settings);
      const scan = scans[i]!;
      return {
        name: tool.name,
        server: tool.server,
        capabilities: labels,
        ruledOut,
        pin: host.store ? (hold?.why ?? 'pinned') : 'no store',
        ...(hold ? { held: hold.reason } : {}),
        scan: {
          verdict: scan.verdict,
          score: Number(scan.score.toFixed(3)),
          findings: scan.findings.filter((f) => f.severity !== 'low'),
        },
      };
    });
    const legs = trifectaLegs(rows.map((r) => ({ name: r.name, labels: r.capabilities })));
    const trifecta = Object.values(legs).every((holders) => holders.length > 0);
    const shown = new Set(rows.map((r) => r.server));
    const sandboxes = host
      .servers()
      .filter((s) => shown.has(s.name))
      .map((s) => ({ server: s.name, sandbox: s.sandbox, summary: describeStatus(s.sandbox) }));
    if (options.json) {
      printJson({ tools: rows, sandboxes, trifecta: { complete: trifecta, legs } });
      return 0;
    }
    print(
      table(
        ['TOOL', 'PIN', 'CAPABILITIES (source: why)'],
        rows.map((r) => [
          r.name,
          r.pin,
          [
            ...r.capabilities.map((l) => `${l.capability} (${l.source}: ${l.why})`),
            ...r.ruledOut.map((l) => `no ${l.capability} (${l.source}: ${l.why})`),
          ].join('; ') || '-',
        ]),
      ),
    );
    print('');
    print(
      table(
        ['SERVER', 'SANDBOX', 'GUARANTEES'],
        sandboxes.map((s) => [
          s.server,
          s.summary,
          s.sandbox.state === 'enforced'
            ? `${s.sandbox.guarantees.network}; ${s.sandbox.guarantees.files}`
            : s.sandbox.state === 'unenforced'
              ? s.sandbox.reason
              : '-',
        ]),
      ),
    );
    for (const r of rows.filter((x) => x.held)) print(`\n${r.name} is held back: ${r.held}`);
    for (const r of rows.filter((x) => x.scan.verdict !== 'clean'))
      print(
        `\n${r.name}: scan ${r.scan.verdict} (score ${r.scan.score.toFixed(2)})\n${r.scan.findings.flatMap((f) => describeFinding(f, '  ')).join('\n')}`,
      );
    print(
      `\nLethal trifecta: ${trifecta ? 'ALL THREE legs present' : 'not complete'}: untrusted input ${legs['untrusted-input'].length}, private data ${legs['private-data'].length}, egress ${legs.egress.length} tools.` +
        (trifecta ? ' Once untrusted input is read, every egress call asks.' : ''),
    );
    return 0;
  });
}
