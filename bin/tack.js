#!/usr/bin/env node
// Checked before anything else loads: on an older Node the first failure would be an unrelated error deep in a
// dependency (the SQLite store, a syntax error), not this.
const major = Number(process.versions.node.split('.')[0]);
if (major < 20) {
  process.stderr.write(
    `error: tack needs Node.js 20 or newer; this is Node.js ${process.versions.node}\n` +
      'hint: Install Node.js 20 or later (for example `nvm install 20`), then run tack again.\n',
  );
  process.exit(2);
}
// `tack --version` alone answers before the command line is even built: scripts call it to check an install.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { VERSION } = await import('../dist/src/version.js');
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
}
const { main } = await import('../dist/src/cli/main.js');
process.exitCode = await main(process.argv);
