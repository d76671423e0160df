import { renderLanePage } from '../../formats/console/lane-page.ts';
import { LANE_PAGE_CSP } from './lane-page-csp.ts';

/** How the console's server renders a lane's page, and the policy it is served under. */
export const LANE_PAGE = { render: renderLanePage, csp: LANE_PAGE_CSP } as const;
