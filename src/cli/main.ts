import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { commanderOutput, exitWhenStdoutCloses, reportError } from './output.js';
import * as agent from './register/agent.js';
import * as audit from './register/audit.js';
import * as auth from './register/auth.js';
import * as bench from './register/bench.js';
import * as call from './register/call.js';
import * as consoleCommand from './register/console.js';
import * as init from './register/init.js';
import * as knowledge from './register/knowledge.js';
import * as listings from './register/listings.js';
import * as mcp from './register/mcp.js';
import * as pins from './register/pins.js';
import * as prompt from './register/prompt.js';
import * as read from './register/read.js';
import * as sandbox from './register/sandbox.js';
import * as scan from './register/scan.js';
import * as serve from './register/serve.js';
import * as serveDocs from './register/serve-docs.js';
import * as serveKnowledge from './register/serve-knowledge.js';
import * as serveSkills from './register/serve-skills.js';
import * as servers from './register/servers.js';
import * as skills from './register/skills.js';
import * as tools from './register/tools.js';
import * as trust from './register/trust.js';

/**
 * Every command module, in the order `tack help` lists them. A module declares its command line (arguments,
 * options, help) and imports what the command does only when it runs (register/lazy.ts).
 */
const COMMANDS = [
  init,
  mcp,
  servers,
  auth,
  tools,
  listings,
  call,
  read,
  prompt,
  serve,
  consoleCommand,
  audit,
  serveDocs,
  serveSkills,
  skills,
  serveKnowledge,
  knowledge,
  agent,
  trust,
  scan,
  sandbox,
  pins,
  bench,
];

/** Builds the `tack` command line. Every command is a thin layer over a library call (see src/index.ts). */
export function buildProgram(setExitCode: (code: number) => void): Command {
  // Set before any command is added: each one (and theirs) inherits the output, the exit override and the help.
  const program = new Command('tack')
    .description('An MCP host and agent harness: tools (MCP), know-how (Agent Skills) and knowledge (OKF).')
    .version(VERSION)
    .configureOutput(commanderOutput)
    .showHelpAfterError()
    .exitOverride()
    .option('--config <file>', 'use this configuration file alone (tack.json or .mcp.json format)')
    .option('--json', 'print machine-readable JSON')
    .option(
      '--trust-project',
      'trust the project for this run (its servers, hooks, allow rules and skills) without `tack trust`',
    );
  for (const command of COMMANDS) command.register(program, { setExitCode });
  return program;
}

/** Runs the CLI and returns its exit code: 0 ok, 1 failure, 2 usage or configuration error, 130 interrupted. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  exitWhenStdoutCloses();
  let code = 0;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync([...argv]);
    return code;
  } catch (error) {
    // Commander has already printed its usage error, help or version (the last two exit 0).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    return reportError(error);
  }
}
