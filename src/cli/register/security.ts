import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

/* What a project may run and what it was shown: trust, scan, sandbox, pins. */

const trustCommand = lazy(() => import('../commands/trust.js'), 'trustCommand');
const scanCommand = lazy(() => import('../commands/scan.js'), 'scanCommand');
const sandboxCheckCommand = lazy(() => import('../commands/sandbox.js'), 'sandboxCheckCommand');
const pinsAcceptCommand = lazy(() => import('../commands/pins.js'), 'pinsAcceptCommand');
const pinsDiffCommand = lazy(() => import('../commands/pins.js'), 'pinsDiffCommand');
const pinsListCommand = lazy(() => import('../commands/pins.js'), 'pinsListCommand');

interface TrustOptions {
  list?: boolean;
  revoke?: boolean;
  yes?: boolean;
  dryRun?: boolean;
}

export const registerTrust: Register = (program, { setExitCode }) => {
  program
    .command('trust')
    .description(
      'trust a project: show what its tack.json, .mcp.json and skills would run, ask, then record their hashes (a changed file asks again)',
    )
    .argument('[dir]', 'the project folder (default: the current one)')
    .option('--yes', 'trust without asking (scripts, CI)')
    .option('--dry-run', 'show what would be trusted; record nothing')
    .option('--list', 'the trusted projects, and whether their files changed since')
    .option('--revoke', 'forget the project: its servers, hooks, allow rules and skills wait again')
    .action(async (dir: string | undefined, opts: TrustOptions, cmd: Command) =>
      setExitCode(
        await trustCommand(dir, {
          ...optionsOf(cmd),
          list: opts.list === true,
          revoke: opts.revoke === true,
          yes: opts.yes === true,
          dryRun: opts.dryRun === true,
        }),
      ),
    );
};

export const registerScan: Register = (program, { setExitCode }) => {
  program
    .command('scan')
    .description(
      'check tool definitions for poisoning (hidden text, directives to the model, exfiltration); exit 1 on a block',
    )
    .option(
      '--tools <file.json>',
      'scan exported definitions offline (tools, prompts, resources) instead of the configured servers',
    )
    .option(
      '--judge',
      'send definitions the score leaves in doubt to scan.judge.model (cached by digest; its quality is not measured)',
    )
    .action(async (opts: { tools?: string; judge?: boolean }, cmd: Command) =>
      setExitCode(
        await scanCommand({
          ...optionsOf(cmd),
          ...(opts.tools ? { tools: opts.tools } : {}),
          ...(opts.judge ? { judge: true } : {}),
        }),
      ),
    );
};

/** `tack sandbox check`. */
export const registerSandbox: Register = (program, { setExitCode }) => {
  const sandbox = program
    .command('sandbox')
    .description('the sandbox servers and skill scripts run in (bubblewrap on Linux)');
  sandbox
    .command('check')
    .description(
      'run a probe inside each sandbox policy and print what it can and cannot reach; exit 1 when that differs from the policy',
    )
    .argument('[server]', 'only this server')
    .option('--skill-scripts', "only the skill scripts' sandbox")
    .action(async (server: string | undefined, opts: { skillScripts?: boolean }, cmd: Command) =>
      setExitCode(
        await sandboxCheckCommand(server, { ...optionsOf(cmd), skillScripts: opts.skillScripts === true }),
      ),
    );
};

/** `tack pins list|diff|accept`: pinned definitions (trust on first use). */
export const registerPins: Register = (program, { setExitCode }) => {
  const pins = program
    .command('pins')
    .description('pinned tool definitions (trust on first use): list, diff and accept what changed');
  pins
    .command('list')
    .description("this project's pins and their status; exit 1 when something is held back")
    .argument('[server]', 'only this server')
    .option('--check', 'connect the servers first: pin what is new, hold what changed')
    .option('--all', "every project's pins, with the projects each was seen in")
    .action(async (server: string | undefined, opts: { check?: boolean; all?: boolean }, cmd: Command) =>
      setExitCode(
        await pinsListCommand(server, {
          ...optionsOf(cmd),
          check: opts.check === true,
          all: opts.all === true,
        }),
      ),
    );
  pins
    .command('diff')
    .description('the pinned definition against the one held back')
    .argument('[server]', 'only this server')
    .argument('[name]', 'only this tool or prompt')
    .action(async (server: string | undefined, name: string | undefined, _opts: unknown, cmd: Command) =>
      setExitCode(await pinsDiffCommand(server, name, optionsOf(cmd))),
    );
  pins
    .command('accept')
    .description('accept what is held back: it becomes the pin and is offered again')
    .argument('<server>', 'the server')
    .argument('[name]', 'only this tool or prompt')
    .option(
      '--kind <kind>',
      'only this kind: tool, instructions, prompt, resource, resource-template, package',
    )
    .option('--sha <prefix>', 'only the version with this sha256 (as `tack pins diff` showed it)')
    .action(
      async (server: string, name: string | undefined, opts: { kind?: string; sha?: string }, cmd: Command) =>
        setExitCode(
          await pinsAcceptCommand(server, name, {
            ...optionsOf(cmd),
            ...(opts.kind ? { kind: opts.kind } : {}),
            ...(opts.sha ? { sha: opts.sha } : {}),
          }),
        ),
    );
};
