import { chmodSync, mkdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, TackError } from '../errors.js';
import { readRegularFile } from '../util/read-regular.js';

/** No configuration file is this large; past it the file is not read (nor a device or FIFO read at all). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** A JSON configuration file as read for editing: its object, and how it was indented (kept when written back). */
export interface JsonFile {
  /** The file written: a symlink's target, so a config kept in dotfiles stays a link. */
  file: string;
  exists: boolean;
  root: Record<string, unknown>;
  indent: string;
}

/** Reads `file` for editing; an absent or empty file is an empty object. A file that is not a JSON object throws. */
export function readJsonFile(path: string, hint: string): JsonFile {
  let file = path;
  try {
    file = realpathSync(path);
  } catch {
    // not there yet: created when written
  }
  let text: string;
  try {
    text = readRegularFile(file, MAX_CONFIG_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { file, exists: false, root: {}, indent: '  ' };
    throw new TackError('CONFIG_UNREADABLE', `${file}: cannot read (${errorMessage(error)})`, {
      subject: { file },
      hint:
        code === 'ENOTREG' || code === 'EFBIG'
          ? 'A configuration file is a regular JSON file of a sensible size: replace it with one.'
          : 'Check the file permissions.',
      cause: error,
    });
  }
  if (text.trim() === '') return { file, exists: true, root: {}, indent: '  ' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new TackError('CONFIG_INVALID', `${file}: not valid JSON (${errorMessage(error)})`, {
      subject: { file },
      hint,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new TackError('CONFIG_INVALID', `${file}: expected a JSON object at the top level`, {
      subject: { file },
      hint,
    });
  // The first indented key says how the file is indented (2 spaces, 4, a tab); JSON.stringify takes it back.
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
  return { file, exists: true, root: parsed as Record<string, unknown>, indent };
}

/**
 * Writes the object whole through a temporary file, so a crash leaves the old file or the new one, never half of
 * one. The file may hold tokens (a server's env): a new file gets `newMode` (0600 unless it is a project's,
 * which is shared anyway), an existing one keeps its mode.
 */
export function writeJsonFile(json: JsonFile, newMode = 0o600): void {
  const { file } = json;
  mkdirSync(dirname(file), { recursive: true });
  let mode = newMode;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  const temporary = `${file}.${process.pid}.tmp`;
  // Created afresh, never through what is there: a link planted at the name (a cloned project can hold one for
  // every likely pid) would otherwise have the JSON written into, and chmod'ed, whatever file it points at.
  rmSync(temporary, { force: true });
  writeFileSync(temporary, `${JSON.stringify(json.root, null, json.indent)}\n`, { mode, flag: 'wx' });
  chmodSync(temporary, mode); // writeFileSync's mode is filtered by the umask
  renameSync(temporary, file);
}
