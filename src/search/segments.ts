/**
 * A task written as one request often needs several tools: "book a flight to Lisbon, then send the itinerary to
 * my wife and add it to my calendar". Ranked as one query, the words of the strongest need crowd out the rest.
 * `querySegments` cuts such a text where a person marks a new step (sentence ends, semicolons, line breaks, list
 * items, and the words that chain steps), so each part can be ranked on its own and the rankings fused. The
 * rules are English punctuation and connectives only; nothing here was fitted to a data set.
 */

const SENTENCES = /(?:[.!?;]+(?=\s|$)|\n+|\s+(?:\d{1,2}[.)]|[-*•])\s+)/u;
const CONNECTIVES =
  /\s*(?:,\s*)?\b(?:and then|then|after that|afterwards|afterward|finally|lastly|also|additionally|next|meanwhile|once (?:that is|it is|done)|as well as)\b\s*,?\s*|,\s+and\s+(?=[a-z])/iu;
const WORD = /[\p{L}\p{N}]+/gu;

/** The parts of a request that may each need a tool; fewer than two parts give an empty list. */
export function querySegments(text: string, minWords = 2): string[] {
  const parts: string[] = [];
  for (const sentence of text.split(SENTENCES)) {
    for (const clause of sentence.split(CONNECTIVES)) {
      const trimmed = clause.trim();
      if ((trimmed.match(WORD)?.length ?? 0) >= minWords) parts.push(trimmed);
    }
  }
  return parts.length >= 2 ? parts : [];
}

const CLAUSES = /\s*,\s*|\s+(?:and|or)\s+/iu;

/**
 * Finer than querySegments: each step also cut at commas and "and", the way a person lists what a task needs
 * ("a recipe with beef, the nutrition facts and a grocery list"). The benchmark's stand-in for a model that
 * splits a task into capability queries before calling search_tools; parts of one word are kept with the next.
 */
export function capabilityClauses(text: string): string[] {
  const steps = querySegments(text, 1);
  const parts: string[] = [];
  for (const step of steps.length > 0 ? steps : [text]) {
    let carry = '';
    for (const clause of step.split(CLAUSES)) {
      const joined = `${carry} ${clause}`.trim();
      if ((joined.match(WORD)?.length ?? 0) >= 2) {
        parts.push(joined);
        carry = '';
      } else carry = joined;
    }
    if (carry && parts.length > 0) parts[parts.length - 1] = `${parts[parts.length - 1]} ${carry}`;
    else if (carry) parts.push(carry);
  }
  return parts.length >= 2 ? parts : [];
}
