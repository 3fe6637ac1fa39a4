import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { commanderOutput, exitWhenStdoutCloses, reportError } from './output.js';
import { registerAgent } from './register/agent.js';
import {
  registerCall,
  registerListings,
  registerPrompt,
  registerRead,
  registerServers,
  registerTools,
} from './register/catalog.js';
import type { Register } from './register/context.js';
import { registerKnowledge } from './register/knowledge.js';
import { registerPins, registerSandbox, registerScan, registerTrust } from './register/security.js';
import {
  registerAudit,
  registerConsole,
  registerServe,
  registerServeDocs,
  registerServeKnowledge,
  registerServeSkills,
} from './register/serving.js';
import { registerAuth, registerInit, registerMcp } from './register/setup.js';
import { registerSkills } from './register/skills.js';

/**
 * Every command, in the order `tack help` lists them. Each declares its command line (arguments, options, help)
 * and imports what it does only when it runs (register/lazy.ts). The commands are grouped into a few modules,
 * not one each: every module is a file read and compiled at each start, `tack --help` included.
 */
const COMMANDS: readonly Register[] = [
  registerInit,
  registerMcp,
  registerServers,
  registerAuth,
  registerTools,
  registerListings,
  registerCall,
  registerRead,
  registerPrompt,
  registerServe,
  registerConsole,
  registerAudit,
  registerServeDocs,
  registerServeSkills,
  registerSkills,
  registerServeKnowledge,
  registerKnowledge,
  registerAgent,
  registerTrust,
  registerScan,
  registerSandbox,
  registerPins,
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
  for (const register of COMMANDS) register(program, { setExitCode });
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
