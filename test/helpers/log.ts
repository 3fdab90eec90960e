import pino, { type Logger } from 'pino';

/** A line a captured logger wrote, parsed. */
export type LogLine = Record<string, unknown> & { level: number; msg: string };

/**
 * A logger (or a destination for one) whose lines land in `lines`, parsed, as they are written:
 * for tests that read what was logged. `msgs(m)` is the lines with that message.
 */
export function captureLog(level = 'info'): { lines: LogLine[]; log: Logger; stream: { write(s: string): void }; msgs(msg: string): LogLine[] } {
  const lines: LogLine[] = [];
  const stream = {
    write(s: string) {
      for (const l of s.split('\n')) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
    },
  };
  return { lines, stream, log: pino({ level }, stream), msgs: (msg) => lines.filter((l) => l.msg === msg) };
}
