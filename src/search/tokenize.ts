import { stemmer } from 'stemmer';
import { pushAll } from '../util/arrays.js';

/**
 * Words for tool search, the same on both sides (index and query), so that whatever a tool's text says can be
 * found by a person who says it differently: identifiers split into words, English reduced to stems, and
 * scripts written without spaces (Chinese, Japanese, Korean) cut into overlapping character pairs.
 */

export interface TokenizeOptions {
  /** Porter stems for ASCII words ("issues", "issued" -> "issu"). */
  stem?: boolean;
  /** Drop English function words ("how", "the", "can"). */
  stopWords?: boolean;
}

/**
 * English function words, plus the conversational wrapper of a request ("can you please help me ...") that
 * appears in queries and never says which tool. Words a tool could be about ("find", "search", "get") are not
 * here: they are frequent, and BM25's IDF already makes them cheap.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between ' +
    'both but by can could did do does doing down during each few for from further had has have having he her ' +
    'here hers herself him himself his how i if in into is it its itself just let me more most my myself no nor ' +
    'not of off on once only or other our ours ourselves out over own same she should so some such than that ' +
    'the their theirs them themselves then there these they this those through to too under until up very was ' +
    'we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    'please want wanna need like know tell give show help im ive id dont also us may might must shall whether'
  ).split(' '),
);

/** Runs of a script written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/u;
const CJK_SPLIT = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/u;
/** Letters, marks and digits: everything else (space, `_`, `-`, `.`, `/`, `&` ...) separates words. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const ASCII_WORD = /^[a-z]+$/;

/**
 * `createIssue` -> `create Issue`, `HTTPServer` -> `HTTP Server`, `PDFTool` -> `PDF Tool`: the case changes
 * inside one identifier mark its words (snake and kebab case are already split by WORD).
 */
function splitCamel(word: string): string[] {
  return word
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(' ');
}

/** Overlapping pairs and single characters: a two-character word is found whichever way the text is cut. */
function cjkGrams(run: string): string[] {
  const chars = [...run];
  const grams = [...chars];
  for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i]! + chars[i + 1]!);
  return grams;
}

const stemCache = new Map<string, string>();

function stem(word: string): string {
  let result = stemCache.get(word);
  if (result === undefined) {
    result = stemmer(word);
    // The vocabulary of a catalog is small, but queries are not: keep the cache bounded.
    if (stemCache.size > 50_000) stemCache.clear();
    stemCache.set(word, result);
  }
  return result;
}

const NON_ASCII = /[\u0080-\uffff]/;
const UPPER = /\p{Lu}/u;

/** The search terms of a text, in order, duplicates kept (term frequency matters to BM25). */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const terms: string[] = [];
  const ascii = !NON_ASCII.test(text);
  // ASCII is already in NFKC, and holds no CJK: most tool text skips both checks.
  for (const [word] of (ascii ? text : text.normalize('NFKC')).matchAll(WORD)) {
    for (const part of !ascii && CJK.test(word) ? word.split(CJK_SPLIT) : [word]) {
      if (part === '') continue;
      if (!ascii && CJK.test(part)) {
        pushAll(terms, cjkGrams(part));
        continue;
      }
      for (const piece of UPPER.test(part) ? splitCamel(part) : [part]) {
        const lower = piece.toLowerCase();
        // Single letters carry no meaning of their own; single digits may.
        if (lower.length < 2 && (lower === '' || !/\p{N}/u.test(lower))) continue;
        if (options.stopWords && STOP_WORDS.has(lower)) continue;
        terms.push(options.stem && ASCII_WORD.test(lower) ? stem(lower) : lower);
      }
    }
  }
  return terms;
}

/**
 * The words of a model-visible tool name: `mcp__github__create_issue` -> `create issue` (the server is indexed
 * as a field of its own, so it does not crowd the name), `getHTTPResponse` -> `get HTTP Response`.
 */
export function nameWords(name: string): string {
  const bare = name.replace(/^mcp__.+?__(?=.)/, '');
  return bare.replace(/[_\-.\s/]+/g, ' ').trim();
}
