import { dirname } from 'node:path';
import { driveToExport } from './plan-driver.ts';

// A standalone parent (plan-driver.ts): drives one run to a validated export and prints the validator's
// output. Bundled by tests that need many parents at once:
//   node drive.mjs <bundle> <state root> <run dir> <plan.md>
const [bundle, state, runDir, planPath] = process.argv.slice(2);
if (bundle === undefined || state === undefined || runDir === undefined || planPath === undefined) {
  process.stderr.write('usage: drive.mjs <bundle> <state root> <run dir> <plan.md>\n');
  process.exit(2);
}
try {
  const { validated } = driveToExport({ bundle, state, cwd: dirname(runDir) }, runDir, planPath);
  process.stdout.write(validated);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
