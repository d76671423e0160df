import { EXIT } from '../../formats/codes.ts';
import { toError } from '../../formats/error.ts';
import { processIo } from './io.ts';
import { main } from './main.ts';

main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`laneward: ${toError(error).message} (INTERNAL)\n`);
    process.exitCode = EXIT.fail;
  },
);
