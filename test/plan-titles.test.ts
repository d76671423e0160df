import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { renderLanePage } from '../formats/console/lane-page.ts';
import { DEFAULT_UI, renderCrewView } from '../formats/console/view.ts';
import { openCrewConsole } from '../main/console/crew-console.ts';
import { planTitle, TITLE_CHARS } from '../main/console/plan-titles.ts';
import { CrewView, type LiveStats } from '../main/console/view-state.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { openStore } from '../main/store/store.ts';
import { ROOT } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan-titles');
const STATS: LiveStats = { running: 0, queued: 0, started: 0, finished: 0, marks: 0, renewalLatencyMs: [] };

function plan(name: string, text: string): string {
  const path = join(root, name);
  writeFileSync(path, text);
  return path;
}

describe('a plan title', () => {
  test.each([
    ['first heading', 'intro\n## Section\n# Migrate the billing export\n# Later\n', 'Migrate the billing export'],
    ['closing hashes and CRLF', '# Fix the lease ##\r\nbody\r\n', 'Fix the lease'],
    ['a heading inside a code fence is no title', '```md\n# not this\n```\n# This one\n', 'This one'],
    ['none', 'no heading\n## only a second level\n#nospace\n', null],
    ['controls escaped', '# a\u001b[2Jb\u202ec\n', 'a\\u001b[2Jb\\u202ec'],
  ])('should read the %s', (name, text, title) => {
    expect(planTitle(plan(`${name.replaceAll(' ', '-')}.md`, text))).toBe(title);
  });

  test('should bound a long title and read no further than the head of the file', () => {
    const long = planTitle(plan('long.md', `# ${'x'.repeat(500)}\n`))!;
    expect([...long]).toHaveLength(TITLE_CHARS);
    expect(long.endsWith('…')).toBe(true);
    expect(planTitle(plan('deep.md', `${'filler line\n'.repeat(1_000)}# Too deep\n`))).toBeNull();
    expect(planTitle(join(root, 'missing.md'))).toBeNull();
  });

  test('should go with its lane in the live view, its snapshot and its story', () => {
    const titles = new Map([['a', 'Plan <A> & "more"']]);
    const story = { lane: 'a' } as unknown as NonNullable<ReturnType<CrewView['laneStory']>>;
    const view = new CrewView('c', () => STATS, ['a', 'b'], () => [], { titles, laneStory: () => story });
    expect(view.snapshot().lanes.map((lane) => lane.title ?? null)).toEqual(['Plan <A> & "more"', null]);
    expect(view.laneStory('a')?.title).toBe('Plan <A> & "more"');
    const html = renderCrewView(view.snapshot(), DEFAULT_UI);
    expect(html).toContain('<a href="/lanes/a">a</a> <span class="title">Plan &lt;A&gt; &amp; &quot;more&quot;</span></td>');
  });

  test('should be read once when the crew loads and shown on the crew page lanes and the lane page, as crew view reads the store', () => {
    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'titled', lanes: 2, broken: 0, concurrency: 1, fixtures: join(ROOT, 'fixtures'), instant: true });
    const lanes = (JSON.parse(readFileSync(file, 'utf8')) as { lanes: { id: string; plan: string }[] }).lanes;
    writeFileSync(join(dir, lanes[0]!.plan), '# Rename the <queue> flag\n\nbody\n');
    writeFileSync(join(dir, lanes[1]!.plan), 'no title here\n');
    // A store that holds no lane yet: every lane is queued, its title still shown.
    openStore(join(dir, 'state'));
    const console = openCrewConsole({ file, cwd: dir, env: {}, state: join(dir, 'state') });
    {
      const snapshot = console.source.snapshot();
      expect(snapshot.lanes.map((lane) => lane.title ?? null)).toEqual(['Rename the <queue> flag', null]);
      const story = console.source.laneStory?.(lanes[0]!.id);
      expect(story?.title).toBe('Rename the <queue> flag');
      expect(renderLanePage(story!)).toContain('<p id="title">Rename the &lt;queue&gt; flag</p>');
      expect(renderLanePage(console.source.laneStory!(lanes[1]!.id)!)).not.toContain('id="title"');
    }
  });
});
