/**
 * `tack/console`: the local web console (`tack console`) as a call: servers, costs, sessions, pins and knowledge in
 * a browser.
 */

export { type ConsoleOptions, type RunningConsole, startConsole } from '../console/server.js';
