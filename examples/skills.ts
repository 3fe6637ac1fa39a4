/**
 * tack/skills: discover Agent Skills, render the tier-1 index within a token budget, activate one, run a script
 * with approval, and validate skills against the specification. Run it after `npm run build`, from the
 * repository's root, with: node dist/examples/skills.js
 */

import {
  type DiscoveredSkill,
  type DiscoverOptions,
  discoverSkills,
  formatSkillIssue,
  type LoadSkillsOptions,
  loadSkills,
  type RunScriptOptions,
  readSkill,
  runSkillScript,
  type ScriptResult,
  type SkillEntry,
  type SkillIssue,
  SkillLibrary,
  type SkillSource,
  type SkillToolsOptions,
  type SkillVerdict,
  skillTools,
  skillVerdict,
  type ValidateOptions,
  validatePaths,
} from '../src/entries/skills.js';
import { countTokens } from '../src/index.js';

const folders = ['examples/skills/team'];

// discoverSkills reads front matter only: scopes (project, user, config folders), precedence, shadowing.
const discover: DiscoverOptions = { configFolders: folders, home: '/nonexistent', trustProject: false };
const discovery = await discoverSkills(discover);
const found: DiscoveredSkill[] = discovery.skills;
for (const skill of found) console.log(`${skill.source.name} (${skill.scope}) ${skill.source.file}`);

// loadSkills is what startAgent uses (a config's folders, plus a connected host's servers' skills);
// SkillLibrary.discover takes discovery options directly.
const options: LoadSkillsOptions = {
  config: { skillFolders: folders, projectTrust: undefined },
  home: '/nonexistent',
};
const skills: SkillLibrary = await loadSkills(options);
const same = await SkillLibrary.discover(discover);
console.log(skills.skills.length === same.skills.length);

// Tier 1: the index the model always sees, within a budget of tokens.
const index = await skills.renderIndex({ countTokens, contextWindow: 200_000 });
console.log(`${index.tokens} tokens\n${index.text}`);

// Tier 2: what activate_skill returns.
const entry: SkillEntry = skills.require('release-notes');
console.log((await skills.activate(entry.name)).text.slice(0, 200));

// Tier 3: a script runs only when `approve` says yes, without a shell, in the skill's folder, with a timeout.
const run: RunScriptOptions = {
  approve: (request) => request.command[0] === 'bash',
  timeoutMs: 10_000,
};
const result: ScriptResult = await runSkillScript(entry, 'collect.sh', [], run);
console.log(result.exitCode, result.stdout.slice(0, 200));

// The same three tiers as the native tools an AgentSession of your own registers.
const tools: SkillToolsOptions = { approve: () => false };
console.log(skillTools(skills, tools).map((tool) => tool.name));

// Validation: the specification's rules, one verdict (valid or not) shared by every part of tack.
const checks: ValidateOptions = { strict: false, countTokens };
const { skills: sources, issues } = await validatePaths(folders, checks);
const all: SkillIssue[] = issues;
for (const issue of all) console.log(formatSkillIssue(issue));
const source: SkillSource = sources[0] ?? (await readSkill(entry.dir));
const verdict: SkillVerdict = await skillVerdict(source, checks);
console.log(`${source.name}: ${verdict.valid ? 'valid' : 'invalid'}, ${verdict.warnings.length} warnings`);
