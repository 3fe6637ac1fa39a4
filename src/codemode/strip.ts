import { transform } from 'sucrase';

/**
 * TypeScript to JavaScript by removing the types, nothing else (no down-levelling: QuickJS runs ES2023). Node 20
 * has no built-in type stripping, and `typescript` is only a development dependency of tack (and ~9 MB to load);
 * sucrase's TypeScript transform is small, pure JavaScript, keeps line numbers, and usually takes well under a
 * millisecond for a script's size. Not always: its parser backtracks, and each level of nested `<T>(` doubles its
 * work (21 levels in 127 bytes: 14 s). So it runs only on the engine's thread (worker.ts), on the script's CPU
 * clock, never on tack's main thread. The script is a function body (`return` at its top level), so it is
 * stripped inside a function and taken out again.
 */
export function stripTypes(body: string): { code: string } | { error: string } {
  const open = 'async function __script__() {\n';
  try {
    const { code } = transform(`${open}${body}\n}`, {
      transforms: ['typescript'],
      disableESTransforms: true,
      keepUnusedImports: true,
    });
    const start = code.indexOf(open);
    const end = code.lastIndexOf('}');
    if (start < 0 || end < start) return { error: 'the TypeScript could not be stripped of its types' };
    return { code: code.slice(start + open.length, end).replace(/\n$/, '') };
  } catch (error) {
    // The wrapper's first line shifts the parser's line numbers by one.
    const message = (error instanceof Error ? error.message : String(error)).replace(
      /\((\d+):(\d+)\)/,
      (_, line: string, column: string) => `(line ${Number(line) - 1}, column ${column})`,
    );
    return { error: `TypeScript: ${message}` };
  }
}
