export * from './paths.js';
export * from './database.js';
export * from './services.js';
export * from './orgs.js';
export * from './process.js';
export * from './rate-limits.js';
export * from './redis.js';
export * from './generations.js';
