/** A scriptable fake of three model APIs, for the real agent CLIs to talk to offline. */
export { startModelServer, scenario, sequence, type ModelServer, type RecordedRequest, type Script } from './server.ts';
export { text, toolCall, blocks, stall, pauseThen, httpError, DEFAULT_USAGE, type Reply, type Block, type StreamOptions, type Usage } from './replies.ts';
export type { Api, ModelRequest } from './request.ts';
