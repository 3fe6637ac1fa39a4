/**
 * A command's entry point, imported when the command runs: `tack --version` and `--help` load none of them, and
 * each command loads only its own part of the library (the AI SDK, the MCP packages and the tokenizer are most of
 * the start-up time of a process that needs none of them).
 */
export function lazy<M, K extends keyof M>(load: () => Promise<M>, name: K) {
  type Fn = M[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
  return (async (...args: unknown[]) => {
    const fn = (await load())[name] as (...a: unknown[]) => Promise<unknown>;
    return fn(...args);
  }) as Fn;
}
