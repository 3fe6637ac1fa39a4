/**
 * Command-shaped text (evidence.ts `run-command`): a shell line that fetches code and runs it, deletes a home or root
 * directory, opens a reverse shell, decodes a payload into a shell, or splices a command into an argument (`; cat
 * ~/.ssh/id_rsa`, `$(curl ...)`, a backquoted `wget`). Found in any field (description, parameters, defaults,
 * enums). Documentation shows commands too (`ls -la | grep src`, `npm install -g x`); these shapes are the ones that
 * do harm when a model runs or passes them, and `always` marks those no tool's purpose explains (a shell tool may
 * document `rm -rf build/`, never `curl ... | sh`).
 *
 * One pass over the body; every gap is bounded (scan.ts's cost rule).
 */

import type { ScanMeter } from './scan-linear.js';

const S = String.raw`\s{1,3}`;
const SHELLS = `(?:sudo${S})?(?:ba|z|da|k|fi)?sh|python[23]?|node|perl|ruby|php|iex|invoke-expression|pwsh|powershell`;
/** Where a spliced or fetched command points: home, root, a credential file, the environment. */
const SENSITIVE = String.raw`(?:~|\$HOME|\/etc\/|\/root|\/home\/|\/Users\/|\.ssh|\.aws|\.env\b|\.kube|id_rsa|\$\{?[A-Z_]{3,40}\}?)`;

const SHAPES = new RegExp(
  [
    // Fetch and run: curl/wget/iwr ... | sh, or sh -c "$(curl ...)".
    String.raw`(?<fetchRun>\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|;&]{0,200}\|\s{0,3}(?:${SHELLS})\b|\b(?:ba|z)?sh${S}-c${S}["']?\$\(\s{0,3}(?:curl|wget)\b|\bsource${S}<\(\s{0,3}(?:curl|wget)\b)`,
    // Decode into a shell: base64 -d ... | sh, echo <payload> | base64 -d.
    String.raw`(?<decodeRun>\bbase64${S}(?:-d|--decode|-D)\b[^\n|;]{0,120}\|\s{0,3}(?:${SHELLS})\b|\becho${S}["']?[A-Za-z0-9+/]{24,}={0,2}["']?\s{0,3}\|\s{0,3}base64${S}(?:-d|--decode|-D)\b)`,
    // Reverse shells and listeners.
    String.raw`(?<reverse>\/dev\/tcp\/|\bnc(?:at)?${S}(?:-[\w]{1,6}${S}){0,3}-[\w]{0,5}e${S}\/bin|\bbash${S}-i${S}>&|\bmkfifo\b[^\n]{0,80}\bnc\b|\bsocat\b[^\n]{0,80}\bexec:)`,
    // Deletes what is not the tool's to delete: a home, the root, everything.
    String.raw`(?<wipe>\brm${S}(?:-{1,2}[\w-]{1,20}${S}){1,3}(?:\/(?=[\s"'\`*]|$)|\/\*|~\/?(?=[\s"'\`*]|$)|\$HOME\b|\*(?=[\s"'\`]|$)|--no-preserve-root)|\bmkfs(?:\.\w{1,8})?\b|\bdd${S}if=[^\n]{0,40}of=\/dev\/|:\(\)\s{0,2}\{\s{0,2}:\|:&)`,
    // A command spliced into a value: `; cat ~/...`, `&& curl ...`, `$(...)` or backquotes running a fetch or a read.
    String.raw`(?<splice>(?:^|[;&|]{1,2}|[\n\u0000])\s{0,3}(?:cat|curl|wget|nc|scp|rm|chmod|bash|sh|python[23]?|eval|base64|env|printenv|whoami|id)${S}${SENSITIVE}|\$\(\s{0,3}(?:curl|wget|cat|base64|env|printenv|whoami|nc|bash|sh)\b[^)\n]{0,100}\)|\`\s{0,3}(?:curl|wget|nc|printenv|whoami|base64${S}-d|cat${S}${SENSITIVE})[^\`\n]{0,100}\`)`,
    // Make something executable and run it.
    String.raw`(?<chmodRun>\bchmod${S}(?:\+x|[0-7]{3,4})${S}[^\n;&|]{1,80}(?:;|&&|\band${S}(?:then${S})?(?:run|execute)\b))`,
  ].join('|'),
  'gi',
);

export interface CommandShape {
  at: number;
  text: string;
  /** A shape no tool's purpose explains (fetch and run, decode and run, a reverse shell). */
  always: boolean;
}

/** The command shapes in `body`, one pass. */
export function commandShapes(body: string, meter: ScanMeter): CommandShape[] {
  const out: CommandShape[] = [];
  for (const m of meter.read(body).matchAll(SHAPES)) {
    const g = m.groups ?? {};
    out.push({
      at: m.index,
      text: m[0],
      always: g.fetchRun !== undefined || g.decodeRun !== undefined || g.reverse !== undefined,
    });
  }
  return out;
}
