import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';

// vitest.config.ts removes NODE_EXTRA_CA_CERTS before the test forks start: no test talks
// TLS, and with it set every node process the suite starts parsed the CA bundle first.
describe('the test suite environment', () => {
  test('should start its node children without NODE_EXTRA_CA_CERTS', () => {
    expect(process.env['NODE_EXTRA_CA_CERTS']).toBeUndefined();
    const child = spawnSync(process.execPath, ['-p', "process.env.NODE_EXTRA_CA_CERTS ?? 'unset'"], { encoding: 'utf8' });
    expect(child.stdout).toBe('unset\n');
  });
});
