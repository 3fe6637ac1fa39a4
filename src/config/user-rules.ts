import {
  chmodSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, TackError } from '../errors.js';
import { type RuleAction, ruleProblem } from '../security/rules.js';

/**
 * Adds a permission rule to a tack.json (the user's, for an "always" answer at an approval prompt). The file is
 * read, the rule appended to `permissions.<action>` unless present, and written whole through a temporary file,
 * so a crash leaves the old file or the new one, never half of one. Other keys are kept as they were.
 */
export function addPermissionRule(configFile: string, action: RuleAction, rule: string): boolean {
  // A config kept in dotfiles is often a symlink: write the file it points at, not over the link.
  let file = configFile;
  try {
    file = realpathSync(configFile);
  } catch {
    // not there yet: created below
  }
  const problem = ruleProblem(rule, action);
  if (problem)
    throw new TackError('CONFIG_INVALID', `permissions.${action}: "${rule}": ${problem}`, {
      subject: { file },
    });
  let root: Record<string, unknown> = {};
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new TackError('CONFIG_UNREADABLE', `${file}: cannot read (${errorMessage(error)})`, {
        subject: { file },
        hint: 'Check the file permissions.',
        cause: error,
      });
  }
  if (text !== undefined && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new TackError('CONFIG_INVALID', `${file}: not valid JSON (${errorMessage(error)})`, {
        subject: { file },
        hint: `Fix the file, or add "${rule}" to permissions.${action} by hand.`,
      });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new TackError('CONFIG_INVALID', `${file}: expected a JSON object at the top`, {
        subject: { file },
      });
    root = parsed as Record<string, unknown>;
  }
  const permissions = (root.permissions ?? {}) as Record<string, unknown>;
  if (typeof permissions !== 'object' || Array.isArray(permissions))
    throw new TackError('CONFIG_INVALID', `${file}: "permissions" must be an object`, {
      subject: { file, path: 'permissions' },
    });
  const list = permissions[action] ?? [];
  if (!Array.isArray(list))
    throw new TackError('CONFIG_INVALID', `${file}: "permissions.${action}" must be a list`, {
      subject: { file, path: `permissions.${action}` },
    });
  if (list.includes(rule)) return false;
  root.permissions = { ...permissions, [action]: [...list, rule] };
  mkdirSync(dirname(file), { recursive: true });
  // The file may hold tokens in servers' env: the new one keeps the old one's mode (0600 for a new file).
  let mode = 0o600;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(root, null, 2)}\n`, { mode });
  chmodSync(temporary, mode); // writeFileSync's mode is filtered by the umask
  renameSync(temporary, file);
  return true;
}
