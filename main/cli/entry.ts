import { EXIT } from '../../formats/codes/codes.ts';
import { errnoCode, toError } from '../../formats/codes/error.ts';
import { outputClosed } from '../interrupt.ts';
import { processIo } from './io.ts';
import { main } from './main.ts';

// A reader that stops early (`| head`) closes the pipe. A command supervising children
// takes that as a cancellation and tears them down first; any other ends quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    const code = errnoCode(error);
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') {
      if (!outputClosed()) process.exit(process.exitCode ?? EXIT.ok);
      return;
    }
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
