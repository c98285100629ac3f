import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'lipsync' },
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'key'], censor: '[redacted]' },
  });
}
