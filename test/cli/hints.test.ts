import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

/** Hints a first-time user follows: each names the command or setting that fixes the mistake at hand. */
const EXAMPLES = ['--config', join(REPO, 'examples', 'tack.json')];
const SHOP = join(REPO, 'test', 'fixtures', 'okf', 'shop');
const AOV = 'computations/average-order-value';

const scope = testScope();

function run(args: string[]) {
  const p = scope.project('tack-hints-');
  return tack(args, { cwd: p.dir, env: p.env });
}

describe('hints on the command line', () => {
  it('a prompt the server does not have: says so and lists its prompts', async () => {
    const out = await run([...EXAMPLES, 'prompt', 'notes', 'nosuch']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('error: server "notes" has no prompt named "nosuch"');
    expect(out.stderr).toMatch(/^hint: .*review_notes.*`tack prompts --server notes`/m);
    expect(out.stderr).not.toContain('tool schema');
  });

  it('a prompt the server refuses (a missing argument): its arguments, not a tool schema (issue 29)', async () => {
    const out = await run([...EXAMPLES, 'prompt', 'notes', 'review_notes', '{}']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('Invalid arguments for prompt review_notes');
    expect(out.stderr).toMatch(/^hint: .*the prompt's name and arguments \(`tack prompts --server notes`\)/m);
    expect(out.stderr).not.toContain('tool schema');
  });

  it('`tack skills` alone lists the skills, as `tack skills list` does (it printed help, exit 2)', async () => {
    const alone = await run([...EXAMPLES, 'skills']);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(/^SKILL\s+SCOPE\s+INDEX/);
    expect(alone.stdout).toBe((await run([...EXAMPLES, 'skills', 'list'])).stdout);
  });

  it('an unknown resource: `tack resources` lists them', async () => {
    const out = await run([...EXAMPLES, 'read', 'nosuch://x']);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^hint: .*`tack resources`/m);
    expect(out.stderr).not.toContain('`tack servers`');
  });

  it('a skill script that does not exist: the skill’s scripts and `tack skills show`', async () => {
    const out = await run([...EXAMPLES, 'skills', 'run', '--yes', 'release-notes', 'nosuch.sh']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("error: skill 'release-notes': nosuch.sh does not exist");
    expect(out.stderr).toMatch(/^hint: Its scripts: .*collect\.sh.*`tack skills show release-notes`/m);
    expect(out.stderr).not.toContain('activate_skill');
  });

  it('a computation without a database: the flag and the tack.json key', async () => {
    const out = await run(['knowledge', 'run', '-b', SHOP, AOV, '-p', 'year=2026']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('no executor for runtime "sqlite"');
    expect(out.stderr).toMatch(/^hint: .*--sqlite <database file>.*knowledge\.runtimes\.sqlite\.database/m);
  });

  it('a missing computation parameter: worded as -p name=value, not JSON', async () => {
    const p = scope.project('tack-hints-');
    const db = new Database(join(p.dir, 'shop.db'));
    db.exec(readFileSync(join(REPO, 'test', 'fixtures', 'okf', 'shop-data.sql'), 'utf8'));
    db.close();
    const out = await tack(['knowledge', 'run', '-b', SHOP, AOV, '--sqlite', 'shop.db'], {
      cwd: p.dir,
      env: p.env,
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('missing required parameter "year"');
    expect(out.stderr).toMatch(/^hint: Pass -p year=2026 /m);
    expect(out.stderr).not.toContain('{"year"');
  });

  it('a bare tool name: did you mean its mcp__<server>__ name', async () => {
    const out = await run([...EXAMPLES, 'call', 'get_forecast', '{"city": "Lisbon"}']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('hint: Did you mean "mcp__weather__get_forecast"?');
  });
});
