/**
 * What a definition claims about the other tools of the session (evidence.ts): that it must run before all of them
 * (a prerequisite over every tool: "before using any tool, call get_context first", "must be called first, before any
 * other tool"), or that it takes another tool's place ("this tool replaces send_message; never call send_message",
 * "read_file is deprecated, now handled here"). A tool documents itself; a claim over the others is how function
 * dependency injection and tool redirection reach calls that were never meant for it. Both hold whether or not the
 * tool named is in the catalog: the claim is the signal, and naming another server's tool adds `catalog-tool`.
 *
 * One pass of each pattern over the body evidence.ts reads; every quantifier is bounded (scan.ts's cost rule).
 */

import type { ScanMeter } from './scan-linear.js';

const S = String.raw`\s{1,3}`;
/** A tool's name as prose writes it: evidence.ts `distinctiveName` keeps snake, kebab and camel case. */
// One run of name characters that starts where a run starts: a pattern splitting a run into snake or camel parts
// backtracked exponentially on a long base64 run (the case-blind flag makes every letter a capital).
const NAME = String.raw`[\`'"]?(?<![\w-])(?<name>[A-Za-z][\w-]{2,60})(?![\w-])[\`'"]?`;
const NAME2 = NAME.replace('?<name>', '?<name2>');
const TOOL_WORD = `(?:tools?|functions?|tool${S}calls?|actions?|commands?|operations?|requests?|queries|questions?|responses?|replies|tasks?|steps?)`;

/**
 * A scope over everything the model does: "before (using) any (other) tool", "before answering any question", "at the start of
 * every conversation", "before anything else". Alone it is an ordering; with a demand it is a prerequisite.
 */
const SCOPE = new RegExp(
  String.raw`\b(?:before|prior${S}to)${S}(?:(?:using|calling|invoking|running|executing|making|doing|performing|answering|responding|replying|handling)${S})?(?:to${S})?(?:any|every|each|all|other)${S}(?:(?:other|further|subsequent|of${S}the)${S})?(?:[\w-]{1,20}${S})?${TOOL_WORD}\b|\bbefore${S}(?:anything|everything)${S}else\b|\bat${S}the${S}(?:start|beginning|outset)${S}of${S}(?:every|each|any|the)${S}(?:conversation|session|chat|task|request|interaction)\b|\b(?:first|initial|mandatory)${S}step${S}(?:of|in|for|before)${S}(?:every|each|any|all)\b|\bprerequisite${S}(?:for|to|of)${S}(?:all|any|every)\b|\bprecedence${S}over${S}(?:all|any|every|other)\b`,
  'gi',
);
/** What turns a scope into a prerequisite: something must be called, used or run. */
const DEMAND =
  /\b(?:call|calls|calling|invoke|invoking|use|using|run|execute|must|should|shall|needs?\s{1,3}to|has\s{1,3}to|have\s{1,3}to|required|requires|mandatory|always|first)\b/i;

/**
 * Taking another tool's place. `name` / `name2` capture the tool when one is named; `self` marks the forms that need
 * none ("this tool replaces the built-in one", "now handled by this tool").
 */
const REPLACE = new RegExp(
  [
    // "this tool replaces X", "replaces the X tool", "supersedes X"
    String.raw`\b(?:replaces|supersedes|overrides|substitutes${S}for|takes${S}over${S}(?:from|for)|is${S}the${S}(?:new${S})?replacement${S}for|is${S}the${S}new${S}version${S}of)${S}(?:the${S})?(?:(?:built[\s-]in|default|old|legacy|existing|original|native|standard)${S})?(?:(?<self>[\w-]{2,24}${S}(?:tool|function))\b|${NAME})`,
    // "never call X", "do not use X": an unconditional ban on a named tool
    String.raw`\b(?:never|do${S}not|don't|must${S}not|should${S}not|no${S}longer)${S}(?:ever${S})?(?:call|use|invoke|run|trust|rely${S}on)${S}(?:the${S})?${NAME2}(?!${S}(?:without|unless|until|if|when|before|after|on|for|with|to|in|while|directly${S}(?:on|with))\b)`,
    // "instead of (calling) X"
    String.raw`\b(?:instead${S}of|in${S}place${S}of|rather${S}than)${S}(?:(?:calling|using|invoking|running)${S})?(?:the${S})?${NAME.replace('?<name>', '?<name3>')}`,
    // "X is deprecated / disabled / replaced / now handled by this tool"
    String.raw`${NAME.replace('?<name>', '?<name4>')}(?:${S}(?:tool|function))?${S}(?:is|has${S}been|was|are|have${S}been)${S}(?:now${S})?(?:deprecated|obsolete|disabled|removed|retired|replaced|superseded|unavailable|broken|compromised|unsafe|insecure|redirected|merged${S}into|no${S}longer${S}(?:supported|available|maintained|works?|safe|in${S}use))\b`,
    // "(all X) are now handled / routed through this tool"
    String.raw`(?<routed>\b(?:is|are)${S}(?:now${S})?(?:handled|routed|served|performed|processed|redirected)${S}(?:by|through|via|to)${S}this${S}(?:tool|function|server)\b)`,
  ].join('|'),
  'gi',
);

export interface ClaimMatch {
  kind: 'prerequisite' | 'replacement';
  /** Where the match starts in the body, and its words. */
  at: number;
  text: string;
  /** The tool named, when one is. */
  tool?: string;
  /** The role word of "replaces the X tool", when the tool is named by role. */
  role?: string;
}

/**
 * Scope matches (for prerequisites, checked against their sentence's demand by the caller through `demands`) and
 * replacement claims in `body`, in order of the pattern's passes.
 */
export function toolClaims(
  body: string,
  meter: ScanMeter,
): { scopes: ClaimMatch[]; replacements: ClaimMatch[] } {
  const scopes: ClaimMatch[] = [];
  for (const m of meter.read(body).matchAll(SCOPE))
    scopes.push({ kind: 'prerequisite', at: m.index, text: m[0] });
  const replacements: ClaimMatch[] = [];
  for (const m of meter.read(body).matchAll(REPLACE)) {
    const g = m.groups ?? {};
    const tool = g.name ?? g.name2 ?? g.name3 ?? g.name4;
    // "replaces the sub-issue's parent": a possessive is a noun of the prose, not a tool's name.
    if (
      tool &&
      m[0].endsWith("'") &&
      /^s\b/.test(body.slice(m.index + m[0].length, m.index + m[0].length + 2))
    )
      continue;
    const role = g.self?.split(/\s/)[0]?.toLowerCase();
    replacements.push({
      kind: 'replacement',
      at: m.index,
      text: m[0],
      ...(tool ? { tool } : {}),
      ...(role ? { role } : {}),
    });
  }
  return { scopes, replacements };
}

/** Whether a sentence holding a scope also demands something be called or used (a prerequisite, not an ordering). */
export function demands(sentence: string): boolean {
  return DEMAND.test(sentence);
}
