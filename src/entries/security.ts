/**
 * `tack/security`: the poisoning scanner, capability labels and the lethal-trifecta legs, permission rules, and
 * the sandbox servers and scripts run in.
 */

export { type SandboxSupport, sandboxSupport } from '../sandbox/support.js';
export {
  type Capability,
  type CapabilityLabel,
  type LabelOptions,
  labelTool,
  trifectaLegs,
} from '../security/capabilities.js';
export { type DefinitionReport, type ScannableDefinition, scanCatalog } from '../security/catalog.js';
export { unpinnedPackageFinding, type VettedPackage } from '../security/package-pins.js';
export { type PermissionRules, type RuleAction, type RuleMatch, RuleSet } from '../security/rules.js';
export type { ScannableTool } from '../security/scan.js';
export {
  type Finding,
  type FindingSeverity,
  type ScanLocation,
  type ScanVerdict,
  scanText,
  scanTool,
  type ToolScan,
} from '../security/scan.js';
export { type SkillText, scanSkillTexts } from '../security/scan-skill.js';
