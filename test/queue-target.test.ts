import { describe, expect, test } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import { queueTarget } from '../main/queue/connection.ts';

/** The USAGE message queueTarget refuses `raw` with. */
function refusal(raw: string): string {
  try {
    queueTarget(raw);
  } catch (error) {
    if (isLanewardError(error) && error.code === 'USAGE') return error.message;
    throw error;
  }
  throw new Error(`accepted ${raw}`);
}

describe('--queue URLs', () => {
  test.each([
    ['redis://127.0.0.1:6380', { host: '127.0.0.1', port: 6380, db: 0 }, 'redis://127.0.0.1:6380'],
    ['redis://box', { host: 'box', port: 6379, db: 0 }, 'redis://box'],
    ['redis://box:7000/15', { host: 'box', port: 7000, db: 15 }, 'redis://box:7000/15'],
    ['redis://[::1]:6379/2', { host: '::1', port: 6379, db: 2 }, 'redis://[::1]:6379/2'],
    ['redis://ops:s3cret@box:6379', { host: 'box', port: 6379, db: 0, username: 'ops', password: 's3cret' }, 'redis://ops:***@box:6379'],
    ['redis://:p%40ss@box', { host: 'box', port: 6379, db: 0, password: 'p@ss' }, 'redis://:***@box'],
  ])('should accept %s', (raw, connection, shown) => {
    const target = queueTarget(raw);
    expect(target.connection).toMatchObject(connection);
    expect(target.url).toBe(shown);
  });

  test.each([
    // The URL is named as given (scheme, query and fragment included), never its password.
    ['http://box:6379', '--queue "http://box:6379" is not a redis://HOST:PORT[/DB] URL'],
    ['rediss://user:pw@box:6379', '--queue "rediss://user:***@box:6379" is not a redis://HOST:PORT[/DB] URL'],
    ['redis://box:6379?password=x', '--queue "redis://box:6379?password=x" is not a redis://HOST:PORT[/DB] URL'],
    ['redis://box#frag', '--queue "redis://box#frag" is not a redis://HOST:PORT[/DB] URL'],
    ['box:6379', '--queue "box:6379" is not a redis://HOST:PORT[/DB] URL'],
    ['not a url', '--queue "not a url" is not a redis://HOST:PORT URL'],
    ['redis://ops:s3cret@bad host:6379', '--queue "redis://ops:***@bad host:6379" is not a redis://HOST:PORT URL'],
    ['redis://box/16', '--queue: the database "16" is not a number from 0 to 15'],
    ['redis://box/1.5', '--queue: the database "1.5" is not a number from 0 to 15'],
    ['redis://box/0/1', '--queue: the database "0/1" is not a number from 0 to 15'],
  ])('should refuse %s as USAGE, naming it', (raw, message) => {
    expect(refusal(raw)).toBe(message);
  });
});
