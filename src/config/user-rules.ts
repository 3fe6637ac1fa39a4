import { TackError } from '../errors.js';
import { type RuleAction, ruleProblem } from '../security/rules.js';
import { readJsonFile, writeJsonFile } from './json-file.js';

/**
 * Adds a permission rule to a tack.json (the user's, for an "always" answer at an approval prompt). The file is
 * read, the rule appended to `permissions.<action>` unless present, and written whole through a temporary file,
 * so a crash leaves the old file or the new one, never half of one. Other keys are kept as they were.
 */
export function addPermissionRule(configFile: string, action: RuleAction, rule: string): boolean {
  const problem = ruleProblem(rule, action);
  if (problem)
    throw new TackError('CONFIG_INVALID', `permissions.${action}: "${rule}": ${problem}`, {
      subject: { file: configFile },
    });
  // A config kept in dotfiles is often a symlink: json-file writes the file it points at, not over the link.
  const json = readJsonFile(configFile, `Fix the file, or add "${rule}" to permissions.${action} by hand.`);
  const { file, root } = json;
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
  // The file may hold tokens in servers' env: a new one is 0600, an existing one keeps its mode.
  writeJsonFile(json);
  return true;
}
