/*
 * Text from a model, a server, a file, a gateway client or a shared index, made safe to draw in a terminal
 * (docs/security.md, "Text on the terminal"). The rule, character by character:
 *   removed           C0 controls but the new line and the tab, DEL and C1 controls: every escape
 *                     sequence starts with one (ESC, CSI U+009B, OSC U+009D), so none is left to move the cursor,
 *                     clear the screen, retitle the window or write the clipboard (OSC 52)
 *   shown as \u{…}    what reorders, hides or breaks the text around it: bidi controls and marks (U+061C, U+200E,
 *                     U+200F, U+202A-U+202E, U+2066-U+2069), zero-width and invisible characters (U+180E, U+200B,
 *                     U+2060-U+2064, U+FEFF), tag characters (U+E0000-U+E007F), and the line and paragraph
 *                     separators (U+2028, U+2029: a line quoted as one stays one); the reader sees they are there
 *   kept              everything else, the joiners (U+200C, U+200D) and variation selectors included: scripts and
 *                     emoji need them, and they neither move the cursor nor reorder a line
 * A tab becomes two spaces, unless `keepTabs` (the CLI keeps them: a diff's header or a Makefile needs them; the
 * full-screen chat measures its lines, and a tab has no width it could measure).
 * The patterns are built from strings: the linter rightly objects to these characters in regex literals.
 */
const REMOVED = '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f';
const SHOWN =
  '\\u061c\\u180e\\u200b\\u200e\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff\\u{e0000}-\\u{e007f}';
const UNPRINTABLE_RE = new RegExp(`[\\t${REMOVED}${SHOWN}]`, 'gu');
/** What JSON may not carry raw to a terminal: the characters above but those JSON.stringify already escapes. */
const JSON_UNPRINTABLE_RE = new RegExp(`[\\u007f-\\u009f${SHOWN}]`, 'gu');

const shown = (c: string) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`;

/** `text` as a terminal may draw it: controls removed, bidi and invisible characters shown, tabs as spaces or kept. */
export function printable(text: string, options: { keepTabs?: boolean } = {}): string {
  const tab = options.keepTabs ? '\t' : '  ';
  return text.replace(UNPRINTABLE_RE, (c) => (c === '\t' ? tab : c.charCodeAt(0) < 0xa0 ? '' : shown(c)));
}

/**
 * `value` as JSON (`JSON.stringify` with `indent`) whose every character a terminal could act on or draw
 * misleadingly is a `\uXXXX` escape: C0 controls are escaped by `JSON.stringify` itself, DEL, C1, the separators,
 * bidi and invisible characters here. Any JSON parser reads the same value back.
 */
export function printableJson(value: unknown, indent?: number): string {
  const json = JSON.stringify(value, null, indent) ?? 'null';
  return json.replace(JSON_UNPRINTABLE_RE, (c) => {
    // A tag character is two UTF-16 units, each escaped: JSON has no longer escape.
    let escaped = '';
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return escaped;
  });
}
