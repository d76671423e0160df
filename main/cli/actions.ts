import { readFileSync } from 'node:fs';
import { EXIT } from '../../formats/codes/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { fixClause, issue } from '../../formats/codes/issue.ts';
import { readPrivateKey, writeKeyPair } from '../actions/keys.ts';
import { loadVerifiedDescriptor } from '../actions/load-descriptor.ts';
import { sha256Hex, signatureFileOf, signatureText } from '../actions/signature.ts';
import { usage } from './args.ts';
import { command, group, refuse, type Command } from './command.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

export const ACTIONS_HELP = `usage: laneward actions <keygen|sign|verify> ... [--json]

  keygen --out DIR               write DIR/actions.key (PKCS#8 PEM, 0600) and
                                 DIR/actions.pub (SPKI PEM, 0644); never replaces either
  sign FILE --key KEY            write FILE.sig: the Ed25519 signature over FILE's exact
                                 bytes, base64 on one line (replaces an older FILE.sig)
  verify FILE --trust PUB        check FILE.sig with the trusted public key, then the
                                 descriptor's schema and schema_version (1)

Prints ACTIONS_KEYGEN: key=<file> pub=<file> pub_sha256=<hex>,
ACTIONS_SIGNED: file=<file> sig=<file> sha256=<hex>, or
ACTIONS_VERIFIED: actions=<n> sha256=<hex> (sha256 of the file bytes). --json prints one
JSON object instead. Exit status: 0 ok, 1 fail, 2 usage, 3 refused (a key file exists:
KEYS_EXIST; the trusted key is not an Ed25519 public key: TRUST_KEY_UNUSABLE; the
descriptor is unsigned, tampered, malformed or of another version: DESCRIPTOR_INVALID).`;

/** One subcommand: parses its own argv, does the work, returns its result object. */
interface Sub {
  readonly options: Record<string, { type: 'string' }>;
  readonly run: (file: string, values: Record<string, string>) => Record<string, unknown>;
  readonly line: (result: Record<string, unknown>) => string;
  /** The --json field that says whether it worked. */
  readonly flag: string;
  /** keygen takes no positional; sign and verify take exactly one FILE. */
  readonly positional: boolean;
}

const SUBS: Record<string, Sub> = {
  keygen: {
    options: { out: { type: 'string' } },
    positional: false,
    flag: 'generated',
    run: (_file, values) => ({ ...writeKeyPair(values.out!) }),
    line: (r) => `ACTIONS_KEYGEN: key=${r.key} pub=${r.pub} pub_sha256=${r.pubSha256}`,
  },
  sign: {
    options: { key: { type: 'string' } },
    positional: true,
    flag: 'signed',
    run: (file, values) => {
      const privateKey = readPrivateKey(values.key!);
      const bytes = readBytes(file);
      const sig = signatureFileOf(file);
      // The signature covers the bytes read here, never a second read of the file.
      writeFileAtomic(sig, signatureText(bytes, privateKey));
      return { file, sig, sha256: sha256Hex(bytes) };
    },
    line: (r) => `ACTIONS_SIGNED: file=${r.file} sig=${r.sig} sha256=${r.sha256}`,
  },
  verify: {
    options: { trust: { type: 'string' } },
    positional: true,
    flag: 'verified',
    run: (file, values) => {
      const { descriptor, sha256 } = loadVerifiedDescriptor(file, values.trust!);
      const names = Object.keys(descriptor.actions);
      return { file, actions: names.length, names, sha256 };
    },
    line: (r) => `ACTIONS_VERIFIED: actions=${r.actions} sha256=${r.sha256}`,
  },
};

/** One table command per subcommand; --help prints the group's help, as it always has. */
function actionCommand(name: string, sub: Sub): Command {
  return command({
    name,
    help: ACTIONS_HELP,
    options: { json: { type: 'boolean' }, ...sub.options },
    run: ({ values, positionals }, io) => {
      const required = Object.keys(sub.options)[0]!;
      const strings = values as Record<string, string | undefined>;
      if (strings[required] === undefined || strings[required] === '') throw usage(`--${required} is required`);
      if (sub.positional ? positionals.length !== 1 : positionals.length !== 0) {
        throw usage(sub.positional ? 'expected exactly one descriptor FILE' : 'keygen takes no positional argument');
      }
      const json = values.json === true;
      const file = positionals[0] ?? '';
      try {
        const result = sub.run(file, strings as Record<string, string>);
        io.out(json ? JSON.stringify({ [sub.flag]: true, ...result }) : sub.line(result));
        return EXIT.ok;
      } catch (caught) {
        if (!isLanewardError(caught)) throw caught;
        const exit = refused(caught) ? EXIT.refused : EXIT.fail;
        if (json) {
          io.out(JSON.stringify({ [sub.flag]: false, code: caught.code, message: caught.message, path: caught.path, fix: fixClause(caught.code, `laneward actions ${name}`) }));
          return exit;
        }
        // A plain failure is rendered by the one catch (exit 1); only a refusal needs its own status.
        if (exit !== EXIT.refused) throw caught;
        return refuse(io, `laneward actions ${name}`, [issue(caught.code, caught.path, caught.message)], false, exit);
      }
    },
  });
}

/** `laneward actions keygen|sign|verify`: the signed action descriptor tools. */
export const ACTIONS = group({
  name: 'actions',
  help: ACTIONS_HELP,
  commands: Object.entries(SUBS).map(([name, sub]) => actionCommand(name, sub)),
});

/** A refusal (exit 3): a descriptor or trust key that may not be used, or a key file that may not be replaced. */
function refused(error: LanewardError): boolean {
  return error.code === 'DESCRIPTOR_INVALID' || error.code === 'TRUST_KEY_UNUSABLE' || error.code === 'KEYS_EXIST';
}

function readBytes(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new LanewardError('IO_ERROR', `cannot read the descriptor: ${toError(error).message}`, { path: file, cause: error });
  }
}
