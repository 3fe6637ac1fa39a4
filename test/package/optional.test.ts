import { describe, expect, it } from 'vitest';
import { requireOptional, requirePackages, TackError } from '../../src/errors.js';

describe('optional packages', () => {
  it('a missing one is named with the command that installs it; an installed one loads', () => {
    const missing = 'tack-test-no-such-package';
    let thrown: unknown;
    try {
      requirePackages('The test feature', ['pg', missing]);
    } catch (error) {
      thrown = error;
    }
    expect(TackError.isInstance(thrown)).toBe(true);
    const error = thrown as TackError;
    expect(error.code).toBe('PACKAGE_MISSING');
    // Only the missing one is named: pg is installed here (a dev dependency).
    expect(error.message).toBe(`The test feature needs the package ${missing}, which is not installed`);
    expect(error.hint).toContain(`npm install ${missing}`);
    expect(error.hint).toContain(`npm install -g ${missing}`);
    expect(() => requirePackages('The test feature', ['pg'])).not.toThrow();
    expect(typeof requireOptional<{ Pool: unknown }>('The test feature', 'pg').Pool).toBe('function');
  });
});
