import type { LaneStory } from '../../formats/console/lane-story.ts';
import { renderLanePage } from '../../formats/console/lane-page.ts';
import { LANE_PAGE_CSP, LANE_PAGE_SCRIPT } from './lane-page-csp.ts';

/** How the console's server renders a lane's page (with its script), and the policy it is served under. */
export const LANE_PAGE = { render: (story: LaneStory) => renderLanePage(story, LANE_PAGE_SCRIPT), csp: LANE_PAGE_CSP } as const;
