/**
 * `tack/skills`: Agent Skills: discovery, the progressive-disclosure library and its tools, scripts, validation.
 */

export type { SkillFinding, SkillScan } from '../security/scan-skill.js';
export { type DiscoveredSkill, type DiscoverOptions, discoverSkills } from '../skills/discover.js';
export { type SkillEntry, SkillLibrary } from '../skills/library.js';
export { type LoadSkillsOptions, loadSkills } from '../skills/load.js';
export { type SkillScanOptions, scanSkill } from '../skills/scan.js';
export { type RunScriptOptions, runSkillScript, type ScriptResult } from '../skills/scripts.js';
export { readSkill, type SkillSource } from '../skills/skill.js';
export {
  checkSkillTools,
  type SkillToolPins,
  type ToolCatalogView,
  type ToolFinding,
  toolCatalogView,
} from '../skills/tool-check.js';
export { findToolMentions, type ToolMention } from '../skills/tool-mentions.js';
export { type SkillToolsOptions, skillTools } from '../skills/tools.js';
export {
  formatIssue as formatSkillIssue,
  type SkillIssue,
  type SkillVerdict,
  skillVerdict,
  type ValidateOptions,
  validatePaths,
} from '../skills/validate.js';
