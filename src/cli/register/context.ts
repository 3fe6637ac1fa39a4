import type { Command } from 'commander';

/** What a command module is handed besides the program: where the exit code of the command that ran goes. */
export interface CommandContext {
  setExitCode(code: number): void;
}

/** A command module's one export: declares its command (or group of commands) on `program`. */
export type Register = (program: Command, context: CommandContext) => void;
