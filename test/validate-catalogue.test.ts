import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { RESULT_CODES } from '../formats/codes/codes.ts';
import { CATALOGUE, cataloguedCodes } from '../fixtures/catalogue.ts';
import { generateRun } from '../fixtures/generate-run.ts';
import { validateRun } from '../workers/validate/validate-run.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('catalogue');

describe('validateRun', () => {
  test('should accept a generated run directory', () => {
    const dir = join(root, 'valid');
    generateRun(dir);
    const report = validateRun(dir);
    expect(report.errors).toEqual([]);
    expect(report).toMatchObject({ valid: true, run: 'run1', status: 'gate_pending', attested: 0 });
  });

  test.each(CATALOGUE.map((variant) => [variant.name, variant] as const))('should report %s with its code alone', (name, variant) => {
    const dir = join(root, name);
    generateRun(dir);
    variant.apply(dir);
    const report = validateRun(dir);
    expect(report.valid).toBe(false);
    expect([...new Set(report.errors.map((found) => found.code))]).toEqual([variant.code]);
  });

  test('should cover every validation result code in the catalogue', () => {
    const validation = Object.keys(RESULT_CODES).filter((code) => code.startsWith('ARTIFACT_'));
    expect([...cataloguedCodes()].sort()).toEqual(validation.sort());
  });
});
