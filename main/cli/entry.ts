import { EXIT } from '../../formats/codes.ts';
import { errnoCode, toError } from '../../formats/error.ts';
import { processIo } from './io.ts';
import { main } from './main.ts';

// A reader that stops early (`| head`) closes the pipe: that ends the command quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (errnoCode(error) === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw error;
  });
}

main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`laneward: ${toError(error).message} (INTERNAL)\n`);
    process.exitCode = EXIT.fail;
  },
);
