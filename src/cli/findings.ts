import type { Finding } from '../security/scan.js';
import { printableJson } from '../util/printable.js';

/**
 * A finding as the CLI shows it (`tack scan`, the pin review, a refused `tack call`): severity, code, field path,
 * why it matters and what it weighs; then the words that raised it, invisible characters shown; then the
 * evidence found in the same field that weighs (one line per feature).
 */
export function describeFinding(f: Finding, indent: string): string[] {
  const weight = f.weight === undefined ? '' : ` [+${f.weight.toFixed(1)}]`;
  const lines = [
    `${indent}${f.severity} ${f.code} (${f.location.field ?? 'description'}): ${f.message}${weight}`,
    `${indent}  ${printableJson(f.match)}`,
  ];
  if (f.decoded) lines.push(`${indent}  decoded: ${printableJson(f.decoded)}`);
  const features = new Map<string, { line: string; more: number }>();
  for (const e of f.evidence ?? []) {
    if (e.weight <= 0 || e.feature === f.code) continue;
    const seen = features.get(e.feature);
    if (seen) seen.more++;
    else
      features.set(e.feature, {
        line: `${indent}  + ${e.feature} [+${e.weight.toFixed(1)}]: ${e.why}: ${printableJson(e.match)}`,
        more: 0,
      });
  }
  for (const { line, more } of features.values()) lines.push(more ? `${line} (and ${more} more)` : line);
  return lines;
}
