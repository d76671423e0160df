declare const __LANEWARD_BUILD_ID__: string | undefined;

/**
 * The id the build stamps into the main bundle and every worker bundle alike; a worker
 * refuses a coordinator of another build. Unbundled sources (tests) report `dev`.
 */
export const BUILD_ID: string = typeof __LANEWARD_BUILD_ID__ === 'string' ? __LANEWARD_BUILD_ID__ : 'dev';
