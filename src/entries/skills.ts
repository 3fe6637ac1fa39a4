/**
 * `tack/skills`: Agent Skills: discovery, loading, the progressive-disclosure library and its tools, scripts,
 * validation.
 */

export {
  type DiscoveredSkill,
  type DiscoverOptions,
  type Discovery,
  discoverSkills,
  type SkillScope,
  scopeRoots,
} from '../skills/discover.js';
export {
  type IndexOptions,
  type InvalidSkill,
  invalidText,
  notServedText,
  type RemoteSkill,
  type RenderedIndex,
  renderEntry,
  type SkillEntry,
  SkillLibrary,
} from '../skills/library.js';
export { type LoadSkillsOptions, loadSkills } from '../skills/load.js';
export { SERVER_SKILL_SEPARATOR, serverSkills } from '../skills/remote.js';
export {
  type ApproveScript,
  formatScriptResult,
  type RunScriptOptions,
  runSkillScript,
  type ScriptApprovalRequest,
  type ScriptResult,
} from '../skills/scripts.js';
export { parseSkill, readSkill, SKILL_FILE, type SkillSource } from '../skills/skill.js';
export {
  ACTIVATE_SKILL,
  READ_SKILL_FILE,
  RUN_SKILL_SCRIPT,
  type SkillToolsOptions,
  skillTools,
} from '../skills/tools.js';
export {
  formatIssue as formatSkillIssue,
  type Severity,
  type SkillIssue,
  type SkillRule,
  type SkillVerdict,
  skillVerdict,
  type ValidateOptions,
  validatePaths,
  validateSkill,
  verdictOf,
} from '../skills/validate.js';
