/**
 * The one order tack sorts names and titles in. Fixed to English collation rather than the machine's locale
 * (String#localeCompare follows LC_ALL/LANG): a generated index.md, the skills index in a prompt and every listing
 * must come out the same on every teammate's machine and CI, or a committed file churns and a prompt's cache prefix
 * differs by who runs it (under sv-SE "Äpfel" sorts after "Zebra", under en before it). Code-point order as the tie
 * break, so strings the collation deems equal still sort one way.
 */
const collator = new Intl.Collator('en');

export function compareText(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
