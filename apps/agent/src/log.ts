/**
 * The agent's log: one line per message on stderr, prefixed so it stands out
 * when `npm start` interleaves it with the server's output. Tests pass their
 * own `write` to read what a user would see.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Logger {
  const min = LOG_LEVELS.indexOf(level);
  const at = (lvl: LogLevel) => (msg: string) => {
    if (LOG_LEVELS.indexOf(lvl) < min) return;
    write(`onset-agent: ${lvl === 'info' ? '' : `${lvl}: `}${msg}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
