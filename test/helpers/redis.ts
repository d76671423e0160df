// The redis-server launcher lives with the fixtures: the bench starts one too.
export { freePort, redisMissing, startRedis, type RedisServer } from '../../fixtures/redis-server.ts';
