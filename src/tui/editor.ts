/** The longest message the input box holds; a paste beyond it is cut (the model has its own limits anyway). */
export const MAX_INPUT_CHARS = 100_000;

/**
 * The input box's text and cursor, as plain values (the Ink component only draws it): multi-line editing with
 * the moves a shell user expects. Every method returns a new state.
 */
export interface EditorState {
  text: string;
  /** Offset into `text`, 0..text.length. */
  cursor: number;
}

export const EMPTY_EDITOR: EditorState = { text: '', cursor: 0 };

export function insert(state: EditorState, input: string): EditorState {
  const clean = input.replace(/\r\n?/g, '\n').replace(/\t/g, '  ');
  const room = MAX_INPUT_CHARS - state.text.length;
  if (room <= 0) return state;
  const piece = clean.slice(0, room);
  return {
    text: state.text.slice(0, state.cursor) + piece + state.text.slice(state.cursor),
    cursor: state.cursor + piece.length,
  };
}

export function backspace(state: EditorState): EditorState {
  if (state.cursor === 0) return state;
  // A surrogate pair (an emoji) goes as one character.
  const step = isLowSurrogate(state.text.charCodeAt(state.cursor - 1)) && state.cursor > 1 ? 2 : 1;
  return {
    text: state.text.slice(0, state.cursor - step) + state.text.slice(state.cursor),
    cursor: state.cursor - step,
  };
}

export function left(state: EditorState): EditorState {
  if (state.cursor === 0) return state;
  const step = isLowSurrogate(state.text.charCodeAt(state.cursor - 1)) && state.cursor > 1 ? 2 : 1;
  return { ...state, cursor: state.cursor - step };
}

export function right(state: EditorState): EditorState {
  if (state.cursor >= state.text.length) return state;
  const step = isHighSurrogate(state.text.charCodeAt(state.cursor)) ? 2 : 1;
  return { ...state, cursor: Math.min(state.text.length, state.cursor + step) };
}

/** The line the cursor is on (0-based) and its column. */
export function position(state: EditorState): { line: number; column: number; lines: string[] } {
  const before = state.text.slice(0, state.cursor).split('\n');
  return { line: before.length - 1, column: before.at(-1)!.length, lines: state.text.split('\n') };
}

/** Up a line; undefined on the first line (the caller recalls history instead). */
export function up(state: EditorState): EditorState | undefined {
  const { line, column, lines } = position(state);
  if (line === 0) return undefined;
  return moveTo(lines, line - 1, column);
}

/** Down a line; undefined on the last line. */
export function down(state: EditorState): EditorState | undefined {
  const { line, column, lines } = position(state);
  if (line >= lines.length - 1) return undefined;
  return moveTo(lines, line + 1, column);
}

export function home(state: EditorState): EditorState {
  const { line, lines } = position(state);
  return moveTo(lines, line, 0);
}

export function end(state: EditorState): EditorState {
  const { line, lines } = position(state);
  return moveTo(lines, line, Number.MAX_SAFE_INTEGER);
}

/** Ctrl-U: deletes from the start of the line to the cursor. */
export function killLineBefore(state: EditorState): EditorState {
  const start = state.text.lastIndexOf('\n', state.cursor - 1) + 1;
  return { text: state.text.slice(0, start) + state.text.slice(state.cursor), cursor: start };
}

/** Ctrl-W: deletes the word before the cursor. */
export function killWordBefore(state: EditorState): EditorState {
  const before = state.text.slice(0, state.cursor);
  const start = before.replace(/\S+\s*$/, '').length;
  return { text: state.text.slice(0, start) + state.text.slice(state.cursor), cursor: start };
}

export function fromText(text: string): EditorState {
  return { text, cursor: text.length };
}

/** The word being typed at the cursor (for completion): its start offset and text. */
export function wordAtCursor(state: EditorState): { start: number; word: string } {
  const before = state.text.slice(0, state.cursor);
  const match = /\S*$/.exec(before)!;
  return { start: match.index, word: match[0] };
}

/** Replaces the word at the cursor with `replacement`. */
export function replaceWord(state: EditorState, replacement: string): EditorState {
  const { start } = wordAtCursor(state);
  return {
    text: state.text.slice(0, start) + replacement + state.text.slice(state.cursor),
    cursor: start + replacement.length,
  };
}

function moveTo(lines: readonly string[], line: number, column: number): EditorState {
  let offset = 0;
  for (let i = 0; i < line; i++) offset += lines[i]!.length + 1;
  return { text: lines.join('\n'), cursor: offset + Math.min(column, lines[line]!.length) };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
