/**
 * Text from a model, a server, a file or a shared session index made safe to draw in a terminal: tabs as spaces,
 * and control characters (escape sequences that would move the cursor, clear the screen or retitle the terminal)
 * removed, new lines kept.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is removed.
  return text.replace(/\t/g, '  ').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}
