/**
 * The prior weights of the poisoning model: what each feature is believed to be worth before any data, set by hand
 * from what the feature means (issue 15's list of evidence), not from the corpus. Fitting (fit.ts) pulls each
 * weight from its prior towards what the training data says, as far as the data supports it (an L2 penalty
 * around the prior): a feature that never occurs in the training side of a fold keeps its prior. Log-odds.
 */
export const PRIOR_BIAS = -6;

export const PRIORS: Readonly<Record<string, number>> = {
  // addressed to the model
  'model-address': 2.5,
  'second-person-order': 0.7,
  imperative: 0.3,
  'emphatic-order': 0.5,
  override: 3.5,
  secrecy: 3,
  trigger: 1,
  // authority, preference
  'authority-markup': 2.5,
  'caps-alert': 0.3,
  'authority-claim': 0.8,
  deprecation: 0.3,
  superlative: 2,
  exclusivity: 2.5,
  // other tools, ordering
  'other-tools': 0.8,
  'named-tool': 0.3,
  'catalog-tool': 1,
  ordering: 0.5,
  'ordered-tool-use': 1.5,
  'directs-other-tools': 2,
  'disparages-tools': 3,
  // Issue 33: claims over the other tools, command shapes. No corpus has been fitted with them yet.
  'tool-prerequisite': 3,
  'tool-replacement': 3,
  // payloads, data
  'shell-payload': 1.5,
  'run-command': 3,
  'injection-key': 3.5,
  'safety-off': 2,
  'data-sink': 0.3,
  'send-to': 1.2,
  'credential-source': 0.3,
  'context-source': 1.5,
  'private-source': 1,
  'source-transfer': 2,
  'hostile-words': 2,
  redirection: 1.5,
  coercion: 1.5,
  'active-content': 2.5,
  // the definition as a whole
  'schema-directive': 2.5,
  // Issue 33: not fitted yet.
  'param-directive': 3,
  'param-out-of-scope': 2.5,
  'name-mismatch': 2,
  'name-claim': 2.5,
  'name-homoglyph': 5,
  'annotation-mismatch': 2.5,
  // the cue scanner's findings (scan.ts), medium and high
  'cue.instruction-override.high': 3.5,
  'cue.model-directive.high': 3,
  'cue.model-directive': 1,
  'cue.context-exfil.high': 3.5,
  'cue.tool-shadowing.high': 3,
  'cue.tool-shadowing': 1,
  'cue.sensitive-path.high': 3,
  'cue.sensitive-path': 0.8,
  'cue.secret-shaped.high': 3,
  'cue.secret-shaped': 1,
  'cue.exfil-url.high': 3,
  'cue.exfil-url': 1,
  'cue.encoded-payload': 2.5,
  'cue.hidden-markup': 2,
  'cue.zero-width.high': 4,
  'cue.zero-width': 2,
  'cue.bidi-control.high': 4,
  'cue.oversized': 0.5,
};

/**
 * Catalog checks (catalog.ts): not fitted. The corpus holds each source's tools as published, not the catalogs they
 * would meet, so it cannot say what an overlap is worth; these stay as set here.
 */
export const FIXED: Readonly<Record<string, number>> = {
  'catalog-overlap': 1,
  'catalog-competing-claim': 2.5,
};

/**
 * Features that may flag a definition on their own (verdict.ts `standalone`): each is an attack in itself by what it
 * means. A fold keeps those that its training benign definitions show at most STANDALONE_FP of the time (fit.ts),
 * so a candidate that honest text uses is dropped by the data, not by hand.
 */
export const STANDALONE_CANDIDATES: readonly string[] = [
  'override',
  'secrecy',
  'injection-key',
  'hostile-words',
  'redirection',
  'active-content',
  'name-homoglyph',
  'name-claim',
  'authority-markup',
  'exclusivity',
  'disparages-tools',
  'directs-other-tools',
  'tool-prerequisite',
  'tool-replacement',
  'run-command',
  'safety-off',
  'superlative',
  'source-transfer',
  'send-to',
  'schema-directive',
  'param-directive',
  'param-out-of-scope',
  'annotation-mismatch',
  'catalog-competing-claim',
  'cue.instruction-override.high',
  'cue.context-exfil.high',
  'cue.sensitive-path.high',
  'cue.exfil-url.high',
  'cue.secret-shaped.high',
  'cue.zero-width.high',
  'cue.zero-width',
  'cue.bidi-control.high',
  'cue.hidden-markup',
  'cue.encoded-payload',
];
