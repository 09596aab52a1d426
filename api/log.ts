/**
 * Structured JSON logs (winston) for every Cairn process, to stderr so
 * stdout stays free for what a command prints for its user.
 */
import winston from 'winston';

/** A JSON logger tagged with the component that logs. */
export function createLogger(component: string, level = process.env.CAIRN_LOG_LEVEL ?? 'info'): winston.Logger {
  return winston.createLogger({
    level,
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] })],
  });
}
