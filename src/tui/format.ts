import { maskSecrets, type SecretMasker } from '../util/secrets.js';

/** `mcp__notes__add_note` → `add_note`; tack's own tools keep their name. */
export function shortToolName(name: string, server?: string): string {
  const prefix = server ? `mcp__${server}__` : undefined;
  return prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/** One line of arguments for a folded block: `city: "Lisbon", days: 3`, secrets masked, cut at `max`. */
export function argumentSummary(args: unknown, masker: SecretMasker | undefined, max = 80): string {
  const masked = maskSecrets(args, masker);
  let text: string;
  if (typeof masked === 'object' && masked !== null && !Array.isArray(masked))
    text = Object.entries(masked)
      .map(([key, value]) => `${key}: ${JSON.stringify(value) ?? 'undefined'}`)
      .join(', ');
  else text = JSON.stringify(masked) ?? '';
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/** Arguments pretty-printed for a dialog or an expanded block, secrets masked. */
export function prettyArguments(args: unknown, masker: SecretMasker | undefined): string {
  return JSON.stringify(maskSecrets(args, masker), null, 2) ?? 'undefined';
}

/** A text with secrets masked (a tool's result shown expanded). */
export function maskText(text: string, masker: SecretMasker | undefined): string {
  return String(maskSecrets(text, masker));
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The first `lines` lines of a text, with a note of how many were left out. */
export function headLines(text: string, lines: number): string {
  const all = text.split('\n');
  if (all.length <= lines) return text;
  return `${all.slice(0, lines).join('\n')}\n… ${all.length - lines} more lines`;
}

export { printable } from '../util/printable.js';

/** An error's message, with its hint (how to do it right) when it has one. */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const hint = (error as { hint?: unknown }).hint;
  return typeof hint === 'string' ? `${error.message} (${hint})` : error.message;
}
