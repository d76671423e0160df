import { describe, expect, test } from 'vitest';
import { LanewardError } from '../formats/codes/error.ts';
import { RESULT_CODES, type ResultCode } from '../formats/codes/codes.ts';
import { fixClause, issue } from '../formats/codes/issue.ts';
import { command, dispatch, group, rawCommand, refuse } from '../main/cli/command.ts';
import type { Io } from '../main/cli/io.ts';

function recorder(): Io & { out_: string[]; err_: string[] } {
  const out_: string[] = [];
  const err_: string[] = [];
  return { out_, err_, out: (line) => out_.push(line), err: (line) => err_.push(line), errRaw: () => {}, stderrIsTTY: false };
}

const echo = command({
  name: 'echo',
  help: 'usage: t echo WORD',
  options: { loud: { type: 'boolean' }, sep: { type: 'string' } },
  run: ({ values, positionals }, io) => {
    io.out(values.loud === true ? positionals.join(' ').toUpperCase() : positionals.join(' '));
    return 0;
  },
});
const refused = rawCommand('refused', () => {
  throw new LanewardError('DESCRIPTOR_INVALID', 'unsigned', { path: 'a.json' });
});
const broken = rawCommand('broken', () => {
  throw new Error('boom');
});
const T = group({ name: 't', help: 'usage: t <echo>', commands: [echo, refused, broken] });
const DESCRIPTOR_FIX = "sign the descriptor again (laneward actions sign FILE --key KEY) with the key whose public half the crew file's actions.trust (or --trust) names, and check it with laneward actions verify FILE --trust PUB";

describe('dispatch', () => {
  test.each([
    [[], 2],
    [['--help'], 0],
    [['-h'], 0],
    [['help'], 0],
  ])('should print the group help for %j and exit %i', async (args, exit) => {
    const io = recorder();
    expect(await dispatch(T, args, io, 'laneward t')).toBe(exit);
    expect(io.out_).toEqual(['usage: t <echo>']);
    expect(io.err_).toEqual([]);
  });

  test('should refuse an unknown subcommand as USAGE, exit 2, one line', async () => {
    const io = recorder();
    expect(await dispatch(T, ['nope'], io, 'laneward t nope')).toBe(2);
    expect(io.out_).toEqual([]);
    // The fix names the group, whose --help lists its subcommands, never the unknown word.
    expect(io.err_).toEqual(['laneward t nope: the command line is not one laneward accepts (unknown t subcommand "nope"); fix: use only the options and arguments laneward t --help lists (USAGE)']);
  });

  test('should print a command help for --help and -h, before its own checks', async () => {
    for (const flag of ['--help', '-h']) {
      const io = recorder();
      expect(await dispatch(T, ['echo', flag, '--loud'], io, 'laneward t echo')).toBe(0);
      expect(io.out_).toEqual(['usage: t echo WORD']);
    }
  });

  test('should run a command on its strictly parsed options', async () => {
    const io = recorder();
    expect(await dispatch(T, ['echo', '--loud', 'a', 'b'], io, 'laneward t echo')).toBe(0);
    expect(io.out_).toEqual(['A B']);
    const bad = recorder();
    expect(await dispatch(T, ['echo', '--bogus'], bad, 'laneward t echo')).toBe(2);
    expect(bad.err_).toHaveLength(1);
    expect(bad.err_[0]).toMatch(/^laneward t echo: .*Unknown option '--bogus'.*; fix: use only the options and arguments laneward t echo --help lists \(USAGE\)$/);
    // A value that starts with a dash: one line, saying how to give one.
    const dashed = recorder();
    expect(await dispatch(T, ['echo', '--sep', '-x'], dashed, 'laneward t echo')).toBe(2);
    expect(dashed.err_).toEqual([expect.stringMatching(/^laneward t echo: .*'--sep' argument is ambiguous.* use '--sep=-XYZ'.*\(USAGE\)$/)]);
  });

  test('should map a thrown code to its exit through the one table, INTERNAL for anything else', async () => {
    const io = recorder();
    expect(await dispatch(T, ['refused'], io, 'laneward t refused')).toBe(3);
    expect(io.err_).toEqual([expect.stringMatching(/^laneward t refused: .*\(unsigned at a\.json\).*\(DESCRIPTOR_INVALID\)$/)]);
    const internal = recorder();
    expect(await dispatch(T, ['broken'], internal, 'laneward t broken')).toBe(1);
    expect(internal.err_).toEqual([expect.stringMatching(/\(boom\).*\(INTERNAL\)$/)]);
  });

  test('should print a JSON error object on stdout where the group asks for it', async () => {
    const J = group({ name: 'j', help: 'h', commands: [refused], failure: { json: true, context: (sub) => `j ${sub ?? '?'}` } });
    const io = recorder();
    expect(await dispatch(J, ['refused', '--json'], io, 'x')).toBe(3);
    expect(io.out_.map((line) => JSON.parse(line))).toEqual([{ ok: false, code: 'DESCRIPTOR_INVALID', path: 'a.json', message: 'unsigned', fix: DESCRIPTOR_FIX }]);
    const plain = recorder();
    expect(await dispatch(J, ['refused', '--', '--json'], plain, 'x')).toBe(3);
    expect(plain.out_).toEqual([]);
    expect(plain.err_[0]).toMatch(/^j refused: /);
  });

  test('should end options at the first -- for a command that takes operands, and parse nothing after it', async () => {
    const run = command({
      name: 'run',
      help: 'usage: t run FILE -- COMMAND',
      options: { json: { type: 'boolean' } },
      operands: true,
      run: ({ values, positionals, operands }, io) => {
        io.out(JSON.stringify({ json: values.json === true, positionals, operands }));
        return 0;
      },
    });
    const R = group({ name: 'r', help: 'h', commands: [run] });
    const io = recorder();
    expect(await dispatch(R, ['run', 'f', '--json', '--', 'cmd', '--help', '--', '-x'], io, 'r run')).toBe(0);
    expect(io.out_).toEqual(['{"json":true,"positionals":["f"],"operands":["cmd","--help","--","-x"]}']);
    const none = recorder();
    expect(await dispatch(R, ['run', 'f'], none, 'r run')).toBe(0);
    expect(none.out_).toEqual(['{"json":false,"positionals":["f"],"operands":[]}']);
    const help = recorder();
    expect(await dispatch(R, ['run', '-h', '--', 'cmd'], help, 'r run')).toBe(0);
    expect(help.out_).toEqual(['usage: t run FILE -- COMMAND']);
  });

  test('should refuse a bare group as USAGE with nothing on stdout where the group names what is missing', async () => {
    const M = group({ name: 'm', help: 'usage: m <echo>', commands: [echo], missing: 'expected echo' });
    const io = recorder();
    expect(await dispatch(M, [], io, 'laneward m')).toBe(2);
    expect(io.out_).toEqual([]);
    expect(io.err_).toEqual(['laneward m: the command line is not one laneward accepts (expected echo); fix: use only the options and arguments laneward m --help lists (USAGE)']);
    const help = recorder();
    expect(await dispatch(M, ['--help'], help, 'laneward m')).toBe(0);
    expect(help.out_).toEqual(['usage: m <echo>']);
  });

  test("should add a group's failure fields to the JSON object and its lines after the error line", async () => {
    const seen: unknown[] = [];
    const F = group({
      name: 'f',
      help: 'h',
      commands: [refused],
      failure: {
        json: true,
        more: (error, exit, failed) => {
          seen.push([error.code, exit, failed.sub, failed.args]);
          return { fields: { runDir: '-' }, lines: [`RESULT: exit=${exit}`] };
        },
      },
    });
    const json = recorder();
    expect(await dispatch(F, ['refused', '--json'], json, 'f refused')).toBe(3);
    expect(json.out_.map((line) => JSON.parse(line))).toEqual([{ ok: false, code: 'DESCRIPTOR_INVALID', path: 'a.json', message: 'unsigned', fix: DESCRIPTOR_FIX, runDir: '-' }]);
    const text = recorder();
    expect(await dispatch(F, ['refused', 'x'], text, 'f refused')).toBe(3);
    expect(text.err_).toEqual([expect.stringMatching(/^f refused: .*\(DESCRIPTOR_INVALID\)$/)]);
    expect(text.out_).toEqual(['RESULT: exit=3']);
    const unknown = recorder();
    expect(await dispatch(F, ['nope'], unknown, 'f nope')).toBe(2);
    expect(seen).toEqual([
      ['DESCRIPTOR_INVALID', 3, 'refused', ['--json']],
      ['DESCRIPTOR_INVALID', 3, 'refused', ['x']],
      ['USAGE', 2, undefined, []],
    ]);
  });
});

describe('fix clauses', () => {
  test('should name no placeholder the user must fill in: every {command} is filled, no <word> is left', () => {
    for (const code of Object.keys(RESULT_CODES) as ResultCode[]) {
      const fix = fixClause(code, 'laneward crew run');
      expect([code, fix]).not.toEqual([code, expect.stringMatching(/\{command\}|<command>/)]);
    }
  });

  test('should carry code, message and fix in a refusal JSON object, each of its errors with its own fix', () => {
    const io = recorder();
    const issues = [issue('KEYS_EXIST', 'k/actions.key', 'there'), issue('USAGE', '', 'bad')];
    expect(refuse(io, 'laneward t echo', issues, true, 3)).toBe(3);
    const object = JSON.parse(io.out_[0]!);
    expect(object).toMatchObject({ ok: false, code: 'KEYS_EXIST', message: 'there', fix: fixClause('KEYS_EXIST', 'laneward t echo') });
    expect(object.errors.map((e: { code: string; fix: string }) => [e.code, e.fix])).toEqual([
      ['KEYS_EXIST', fixClause('KEYS_EXIST', 'laneward t echo')],
      ['USAGE', 'use only the options and arguments laneward t echo --help lists'],
    ]);
  });

  test('should point an unknown top-level command at laneward --help', async () => {
    const io = recorder();
    const top = rawCommand('laneward', () => {
      throw new LanewardError('USAGE', 'unknown command "nope"');
    });
    expect(await dispatch(top, ['nope'], io, 'laneward nope')).toBe(2);
    expect(io.err_).toEqual(['laneward nope: the command line is not one laneward accepts (unknown command "nope"); fix: use only the options and arguments laneward --help lists (USAGE)']);
  });
});
