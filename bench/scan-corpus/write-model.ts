import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMain, log, repoRoot } from '../util.js';
import { modelSource } from './fit.js';
import { fitAll, trainingItems } from './run.js';

/**
 * `node dist/bench/scan-corpus/write-model.js [--write]`: fits the poisoning model on every source group of the
 * labelled corpus (TACK_SCAN_CORPUS), its knobs chosen by the same inner cross-validation as every held-out fold,
 * and prints it, or with `--write` writes src/security/scan-model.ts. The figures of that model on the corpus are
 * tuned ones (run.ts reports them apart from the held-out ones).
 */
if (isMain(import.meta.url)) {
  const { scored, items, description } = trainingItems();
  const { model, knobs } = fitAll(scored, description);
  log(
    `fitted on ${items.length} definitions: knobs ${JSON.stringify(knobs)}, bias ${model.bias}, thresholds ${JSON.stringify(model.thresholds)}`,
  );
  if (process.argv.includes('--write')) {
    writeFileSync(join(repoRoot, 'src/security/scan-model.ts'), modelSource(model));
    log(
      'wrote src/security/scan-model.ts (format it with `npx biome check --write src/security/scan-model.ts`)',
    );
  } else process.stdout.write(`${JSON.stringify(model, null, 2)}\n`);
}
