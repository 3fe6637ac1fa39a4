#!/usr/bin/env node
// `npm test` runs this before anything else (plain JavaScript: nothing is built yet). The suite runs real
// programs from Debian's packages: PostgreSQL (the store's PostgreSQL tests, knowledge computations), nginx (the
// deploy test in front of three `tack serve`), bubblewrap (the sandbox), Chromium (the console) and the sqlite3
// shell (the README's commands). What is missing is installed with apt-get when this runs as root, as on a fresh CI
// machine; otherwise the one command to run is named and the suite does not start (it would fail half an hour
// later on the first test that needs it). TACK_TEST_SYSTEM=skip leaves the check out.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const NEEDS = [
  { what: 'PostgreSQL', pkg: 'postgresql', found: () => onPath('initdb') || postgresBinary() },
  { what: 'nginx', pkg: 'nginx', found: () => onPath('nginx') || existsSync('/usr/sbin/nginx') },
  { what: 'bubblewrap', pkg: 'bubblewrap', found: () => onPath('bwrap') },
  { what: 'Chromium', pkg: 'chromium', found: () => onPath('chromium') },
  { what: 'the sqlite3 shell', pkg: 'sqlite3', found: () => onPath('sqlite3') },
];

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** Debian puts initdb under /usr/lib/postgresql/<version>/bin, off the PATH. */
function postgresBinary() {
  try {
    return readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`));
  } catch {
    return false;
  }
}

const say = (line) => process.stderr.write(`test system: ${line}\n`);

if (process.env.TACK_TEST_SYSTEM === 'skip') process.exit(0);
const missing = NEEDS.filter((need) => !need.found());
if (missing.length === 0) {
  say(`${NEEDS.map((n) => n.what).join(', ')} found; the suite takes about 15 minutes on 2 cores`);
  process.exit(0);
}
const names = missing.map((m) => m.what).join(', ');
const packages = missing.map((m) => m.pkg);
const command = `apt-get install -y ${packages.join(' ')}`;
if (process.getuid?.() !== 0 || !onPath('apt-get')) {
  say(
    `${names} missing; the suite runs them for real. Install them (Debian/Ubuntu: sudo apt-get update && sudo ${command}), then run npm test again (TACK_TEST_SYSTEM=skip runs it without).`,
  );
  process.exit(1);
}
say(`${names} missing: installing ${packages.join(', ')} from Debian's packages (apt-get, a minute or two)`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [
  ['update', '-qq'],
  ['install', '-y', '-qq', ...packages],
]) {
  const run = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (run.status !== 0) {
    say(
      `apt-get ${args.join(' ')} failed (exit ${run.status ?? run.signal}): ${(run.stderr ?? '').trim().slice(-2000)}`,
    );
    process.exit(1);
  }
}
const still = missing.filter((need) => !need.found());
if (still.length > 0) {
  say(`${still.map((m) => m.what).join(', ')} still missing after apt-get: ${command}`);
  process.exit(1);
}
say(`installed ${packages.join(', ')}`);
