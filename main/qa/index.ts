// The QA state machine's public surface: what the CLI and the crew call.
export { qaStart, type QaStartOptions } from './start.ts';
export { qaTurn, type QaTurnOptions } from './turn.ts';
export { qaFinish, type QaFinishOptions } from './finish.ts';
export { qaStop, qaReset, type QaClearOptions } from './clear.ts';
export { qaStatus } from './status.ts';
export { qaConfigFromEnv, QA_DEFAULTS, type QaConfig } from './qa-config.ts';
export { inProcessSupervise, type SuperviseFn, type SuperviseOptions } from './supervise-fn.ts';
export type { QaReport, LaneStatus } from './report.ts';
