#!/usr/bin/env node
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

/**
 * Example server in the 2025 era only: `server.connect(new StdioServerTransport())` answers the `initialize`
 * handshake and nothing newer, like most servers deployed today. tack finds that out by itself. The forecasts
 * are canned, so the example needs no network and no API key.
 */
const FORECASTS: Record<string, string> = {
  berlin: 'Berlin: 4 °C, light rain, wind 20 km/h W',
  lisbon: 'Lisbon: 16 °C, sunny, wind 10 km/h N',
  tokyo: 'Tokyo: 11 °C, clear, wind 5 km/h SE',
};

const server = new McpServer({ name: 'example-weather', version: '0.9.0' });

server.registerTool(
  'get_forecast',
  {
    title: 'Weather forecast',
    description:
      "Get today's forecast for a city (Berlin, Lisbon or Tokyo in this example). Use for weather questions.",
    inputSchema: z.object({ city: z.string().describe('City name, e.g. "Lisbon"') }),
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  async ({ city }) => {
    const forecast = FORECASTS[city.trim().toLowerCase()];
    return forecast
      ? { content: [{ type: 'text', text: forecast }] }
      : {
          isError: true,
          content: [{ type: 'text', text: `No forecast for "${city}". Try Berlin, Lisbon or Tokyo.` }],
        };
  },
);

server.registerTool(
  'list_cities',
  { description: 'List the cities this server has forecasts for.', annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: Object.keys(FORECASTS).join(', ') }] }),
);

await server.connect(new StdioServerTransport());
