import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';

/**
 * Names what never finished. When a test process dies (a native crash, a signal, the heap
 * limit), vitest says only "Worker exited unexpectedly" and the summary counts fewer
 * tests passed than collected, naming neither the file nor the test. This reporter prints
 * a line for each file that did not end, with the tests that had started and never ended:
 * what was running when the process died.
 */
export default class UnfinishedReporter implements Reporter {
  private readonly started = new Set<TestCase>();

  onTestCaseReady(test: TestCase): void {
    this.started.add(test);
  }

  onTestCaseResult(test: TestCase): void {
    this.started.delete(test);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    for (const module of modules) {
      const pending = [...module.children.allTests()].filter((test) => test.result().state === 'pending');
      if (pending.length === 0 && module.state() !== 'pending' && module.state() !== 'queued') continue;
      const running = pending.filter((test) => this.started.has(test)).map((test) => test.fullName);
      process.stdout.write(
        `UNFINISHED: ${relative(process.cwd(), module.moduleId)} state=${module.state()} unfinished_tests=${pending.length}` +
          ` running=${JSON.stringify(running)}\n`,
      );
    }
  }
}
