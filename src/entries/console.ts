/**
 * `tack/console`: the local web console (`tack console`) as a call: servers, costs, sessions, pins and knowledge in
 * a browser, and the MCP Apps view policy it applies.
 */

export { type AppCsp, MCP_APP_MIME, MCP_APPS_PROTOCOL, viewCsp } from '../console/apps.js';
export { type ConsoleOptions, type RunningConsole, startConsole } from '../console/server.js';
