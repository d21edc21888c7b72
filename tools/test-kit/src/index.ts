export { DEFAULT_REDIS_URL, pingRedis, redactedRedisUrl, type TestRedis, type TestRedisOptions, testRedis } from "./redis.js";
