import { describe, expect, test } from 'vitest';
import { parseDuration } from '../formats/text/duration.ts';

describe('parseDuration', () => {
  test.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['500ms', 500],
    ['1.5m', 90_000],
    ['0.05', 3_000],
    ['30', 1_800_000],
    ['596h', 2_145_600_000],
  ])('should read %j as %d ms (a bare number is minutes)', (text, ms) => {
    expect(parseDuration(text, 'm')).toBe(ms);
  });

  test.each([['90x'], ['5 m'], [' 5m'], ['-1'], ['0'], ['0s'], ['0.0001ms'], ['m'], ['1e3'], ['25d'], ['597h'], [''], ['1.2345m'], ['5M']])('should refuse %j', (text) => {
    expect(parseDuration(text, 'm')).toBeNull();
  });
});
