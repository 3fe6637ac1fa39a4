import { describe, expect, it } from 'vitest';
import {
  isSecretKey,
  KEY_SHAPES,
  LineMasker,
  MASK,
  maskSecrets,
  SecretMasker,
  secretValuesOf,
} from '../../src/util/secrets.js';

const shapes = new SecretMasker();

// Assembled here rather than written out, so that secret scanners do not flag this file.
const KEYS = {
  openai: `sk-proj-${'Ab3dEf6hIj9k'.repeat(3)}`,
  anthropic: `sk-ant-api03-${'xY7_zW2-vU5t'.repeat(4)}`,
  github: `ghp_${'a1B2c3D4e5'.repeat(4)}`,
  githubPat: `github_pat_${'11ABCDEFG0'.repeat(3)}_${'aBcDeFgHiJ'.repeat(3)}`,
  aws: `AKIA${'IOSFODNN7EXAMPLE'}`,
  slack: `xoxb-${'123456789012'}-${'abcdefABCDEF'}`,
  google: `AIza${'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q'}`,
  gitlab: `glpat-${'xYz12AbC34dEf56GhI78'}`,
  stripe: `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`,
  npm: `npm_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`,
  jwt: `eyJ${'hbGciOiJIUzI1NiJ9'}.eyJ${'zdWIiOiIxMjM0NTY3ODkwIn0'}.${'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'}`,
};

describe('SecretMasker: key shapes', () => {
  it.each([
    ['openai', 'sk-proj-'],
    ['anthropic', 'sk-ant-'],
    ['github', 'ghp_'],
    ['githubPat', 'github_pat_'],
    ['aws', 'AKIA'],
    ['slack', 'xoxb-'],
    ['google', 'AIza'],
    ['gitlab', 'glpat-'],
    ['stripe', 'sk_live_'],
    ['npm', 'npm_'],
    ['jwt', 'eyJ'],
  ] as const)('masks a %s key, keeping its public prefix', (kind, prefix) => {
    const key = KEYS[kind];
    const masked = shapes.maskText(`the key is ${key} (do not share)`);
    expect(masked).toBe(`the key is ${prefix}${MASK} (do not share)`);
    expect(masked).not.toContain(key.slice(prefix.length, prefix.length + 8));
  });

  it('has one shape per kind the scanner reports, each matching its own example', () => {
    for (const key of Object.values(KEYS)) {
      expect(KEY_SHAPES.some((shape) => new RegExp(shape.re.source).test(key))).toBe(true);
    }
  });

  it('masks a private key block whole, with or without its footer', () => {
    const body = 'MIIEowIBAAKCAQEA1b2c3d4e5f6g7h8\nZm9vYmFyYmF6cXV4cXV1eHF1dXg=\n';
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}-----END RSA PRIVATE KEY-----`;
    expect(shapes.maskText(`key:\n${pem}\ndone`)).toBe(
      `key:\n-----BEGIN RSA PRIVATE KEY-----${MASK}-----END RSA PRIVATE KEY-----\ndone`,
    );
    expect(shapes.maskText(`-----BEGIN PRIVATE KEY-----\n${body}`)).toBe(
      `-----BEGIN PRIVATE KEY-----${MASK}`,
    );
    expect(
      shapes.maskText('-----BEGIN PGP PRIVATE KEY BLOCK-----\nabc\n-----END PGP PRIVATE KEY BLOCK-----'),
    ).toBe(`-----BEGIN PGP PRIVATE KEY BLOCK-----${MASK}-----END PGP PRIVATE KEY BLOCK-----`);
  });

  it('masks Bearer and Basic credentials, URL passwords and values under secret-looking keys', () => {
    expect(shapes.maskText('curl -H "Authorization: Bearer abc123.def456-ghi"')).toBe(
      `curl -H "Authorization: Bearer ${MASK}"`,
    );
    expect(shapes.maskText('Authorization: Basic dXNlcjpwYXNzd29yZA==')).toBe(`Authorization: Basic ${MASK}`);
    expect(shapes.maskText('postgres://app:s3cr3t-pw@db.internal:5432/app')).toBe(
      `postgres://app:${MASK}@db.internal:5432/app`,
    );
    expect(shapes.maskText('login failed: password=hunter22 user=bob')).toBe(
      `login failed: password=${MASK} user=bob`,
    );
    expect(shapes.maskText('DB_PASSWORD=correct-horse')).toBe(`DB_PASSWORD=${MASK}`);
    expect(shapes.maskText('{"apiKey": "live-1234-abcd", "user": "bob"}')).toBe(
      `{"apiKey": "${MASK}", "user": "bob"}`,
    );
    expect(shapes.maskText("client_secret: 'two words here'")).toBe(`client_secret: '${MASK}'`);
    expect(shapes.maskText('x-api-key: k3y-v4lue-here')).toBe(`x-api-key: ${MASK}`);
  });

  it('leaves ordinary text alone: prose, commit hashes, digests, counts, paths, pagination', () => {
    const ordinary = [
      'Fixed in commit 3f2a9c81d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9, see the changelog.',
      'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'Bearer tokens are accepted; use Bearer authentication over TLS.',
      'The token count is high: tokens: 1520 in / 300 out, max_tokens=4096.',
      'Set "token_type": "Bearer" and "nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3cQ" for the next page.',
      'password: required, secret: true, token: null',
      'Open https://example.com/docs?page=2#auth or /home/me/project/.env.example',
      'task-scheduler-configuration-values and risk-assessment-framework-v2 are names',
      'A JWT has three parts: eyJ.header.signature',
      'session 20261130-0215-1a2b3c4d started; id 550e8400-e29b-41d4-a716-446655440000',
      'secret-server: connecting to the backend; token_endpoint: https://auth.example.com/token',
    ];
    for (const text of ordinary) expect(shapes.maskText(text)).toBe(text);
  });

  it('stays linear on hostile input (a server controls what is masked)', () => {
    const hostile = [
      'token'.repeat(40_000),
      `${'a.'.repeat(100_000)}://`,
      `${'x'.repeat(200_000)}@`,
      '-----BEGIN PRIVATE KEY-----'.repeat(5_000),
      `eyJ${'a'.repeat(200_000)}`,
    ];
    const started = performance.now();
    for (const text of hostile) shapes.maskText(text);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('is idempotent: masked text masks to itself', () => {
    const text = `key ${KEYS.openai} and password=hunter22 and Bearer abc123def456`;
    const once = shapes.maskText(text);
    expect(shapes.maskText(once)).toBe(once);
  });
});

describe('SecretMasker: known values', () => {
  it('masks every occurrence of a known value, longest first, and ignores short ones', () => {
    const masker = new SecretMasker({
      values: ['s3rv1ce-t0ken-v4lue', 's3rv1ce-t0ken-v4lue-extended', 'true', '1'],
    });
    expect(masker.values).toEqual(['s3rv1ce-t0ken-v4lue-extended', 's3rv1ce-t0ken-v4lue']);
    expect(masker.maskText('a s3rv1ce-t0ken-v4lue-extended b s3rv1ce-t0ken-v4lue c')).toBe(
      `a ${MASK} b ${MASK} c`,
    );
    expect(masker.maskText('enabled: true, count: 1')).toBe('enabled: true, count: 1');
  });

  it('treats regular expression characters in values literally', () => {
    const masker = new SecretMasker({ values: ['a.b*c+d?(e)[f]'] });
    expect(masker.maskText('x a.b*c+d?(e)[f] y aXbbbcd')).toBe(`x ${MASK} y aXbbbcd`);
  });

  it('adds values with `with`, keeping the ones it had', () => {
    const masker = new SecretMasker({ values: ['first-secret'] }).with(['second-secret']);
    expect(masker.maskText('first-secret second-secret')).toBe(`${MASK} ${MASK}`);
  });
});

describe('SecretMasker: deep masking', () => {
  it('masks strings under secret-looking keys whole and every other string by content, without changing the input', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const input = {
      query: 'weather',
      password: 'hunter2',
      headers: { Authorization: 'Bearer abc', 'x-request-id': 'r-1' },
      nested: [{ apiKey: 'k' }, { note: `use ${KEYS.github}` }],
      usage: { inputTokens: 12, max_tokens: 100 },
      nextPageToken: 'page-2',
      image: bytes,
      count: 3,
      empty: null,
    };
    const copy = structuredClone(input);
    const masked = new SecretMasker().mask(input);
    expect(masked).toEqual({
      query: 'weather',
      password: MASK,
      headers: { Authorization: MASK, 'x-request-id': 'r-1' },
      nested: [{ apiKey: MASK }, { note: `use ghp_${MASK}` }],
      usage: { inputTokens: 12, max_tokens: 100 },
      nextPageToken: 'page-2',
      image: bytes,
      count: 3,
      empty: null,
    });
    expect(masked.image).toBe(bytes);
    expect(input).toEqual(copy);
  });

  it('keeps maskSecrets (the approval prompt) working, with known values when given a masker', () => {
    expect(maskSecrets({ token: 'abc', path: '/tmp/x' })).toEqual({ token: MASK, path: '/tmp/x' });
    const masker = new SecretMasker({ values: ['db-pw-98765'] });
    expect(maskSecrets({ sql: "connect with 'db-pw-98765'" }, masker)).toEqual({
      sql: `connect with '${MASK}'`,
    });
  });

  it('knows which keys hold secrets', () => {
    for (const key of [
      'password',
      'api_key',
      'apiKey',
      'X-Api-Key',
      'access_token',
      'clientSecret',
      'Cookie',
    ])
      expect(isSecretKey(key), key).toBe(true);
    for (const key of [
      'inputTokens',
      'max_tokens',
      'nextPageToken',
      'token_type',
      'tokenizer',
      'query',
      'key',
    ])
      expect(isSecretKey(key), key).toBe(false);
  });
});

describe('LineMasker', () => {
  it('masks line by line and leaves out the body of a private key spread over lines', () => {
    const lines = new LineMasker(new SecretMasker({ values: ['my-service-t0ken'] }));
    const out = [
      'starting with my-service-t0ken',
      '-----BEGIN EC PRIVATE KEY-----',
      'MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oooG0dKQ0cM4oAoGCCqGSM49',
      'AwEHoUQDQgAE',
      '-----END EC PRIVATE KEY-----',
      'ready',
    ].map((line) => lines.line(line));
    expect(out).toEqual([
      `starting with ${MASK}`,
      `-----BEGIN EC PRIVATE KEY-----${MASK}`,
      undefined,
      undefined,
      '-----END EC PRIVATE KEY-----',
      'ready',
    ]);
  });
});

describe('secretValuesOf', () => {
  it('takes header and env values whose name or form looks secret (and the credential after a scheme)', () => {
    const values = secretValuesOf({
      headers: {
        Authorization: 'Bearer hdr-t0ken-123',
        'X-Api-Key': 'plainapikey',
        'X-Request-Source': 'a8F3kd93JdkQ02mZzz',
        'X-Team': 'platform',
        Accept: 'application/json',
      },
    });
    expect(values).toEqual(['Bearer hdr-t0ken-123', 'hdr-t0ken-123', 'plainapikey', 'a8F3kd93JdkQ02mZzz']);
    const env = secretValuesOf({
      env: {
        GITHUB_TOKEN: 'plainword',
        DB_PASSWORD: 'hunter22',
        RANDOM_LOOKING: 'a8F3kd93JdkQ02mZ',
        NODE_ENV: 'production',
        ROOT: '/home/me/project',
        GOOGLE_APPLICATION_CREDENTIALS: '/home/me/creds.json',
        PORT: '8080',
        DEBUG: 'true',
        DATABASE_URL: 'postgres://app:db-pa55word@db/app',
        SENTRY_DSN: 'https://0123456789abcdef@o1.ingest.sentry.io/1',
        DOCS_URL: 'https://example.com/docs',
      },
    });
    expect(env.sort()).toEqual([
      '0123456789abcdef',
      'a8F3kd93JdkQ02mZ',
      'db-pa55word',
      'hunter22',
      'plainword',
    ]);
  });

  it('keeps only secret-looking names with namedOnly (tack’s own environment)', () => {
    expect(
      secretValuesOf(
        { env: { ANTHROPIC_API_KEY: 'key-abc-123', INVOCATION_ID: 'a8F3kd93JdkQ02mZ' } },
        { namedOnly: true },
      ),
    ).toEqual(['key-abc-123']);
  });
});
