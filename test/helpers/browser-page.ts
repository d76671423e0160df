import { HeadlessBrowser, findChromium } from './chromium.ts';
import { settleTagged } from './procs.ts';

// The one setup the console's Chromium tests share: find the browser (or why not, for a
// skip line), launch it tagged so every process of it can be proved gone, and close it.

const FOUND = findChromium();
/** Why there is no Chromium to drive (the suite is skipped), or undefined. */
export const CHROMIUM_SKIP: string | undefined = 'missing' in FOUND ? FOUND.missing : undefined;

/** A launched browser and the proof that it is gone when closed. */
export interface BrowserUnderTest {
  readonly browser: HeadlessBrowser;
  /** Closes the browser; resolves with the pids of it still running after `ms` (none: []). */
  close(ms?: number): Promise<number[]>;
}

/** Launches headless Chromium with an environment tag naming `name` and this test process. */
export async function launchBrowser(name: string): Promise<BrowserUnderTest> {
  if (!('binary' in FOUND)) throw new Error(`no chromium: ${FOUND.missing}`);
  const tag = `LANEWARD_TEST_BROWSER=${name}-${process.pid}`;
  const [key, value] = tag.split('=') as [string, string];
  const browser = await HeadlessBrowser.launch(FOUND.binary, { [key]: value });
  return {
    browser,
    close: async (ms = 5_000) => {
      await browser.close();
      return settleTagged(tag, ms);
    },
  };
}
