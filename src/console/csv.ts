import { once } from 'node:events';
import type { FastifyReply } from 'fastify';
import { stringify } from 'csv-stringify';

/**
 * CSV exports (docs/console.md, "Exports"): every matching row, streamed a keyset page at a time
 * (memory stays flat however many rows), UTF-8 with a byte-order mark so Excel opens Korean
 * text correctly. Every cell holding a line break (\r or \n), a quote or the separator is quoted,
 * so a value can never start a physical line of its own (a bare \n used to pass unquoted, and
 * "\n=1+1" became a line starting with a formula). A text cell that begins with = + - @, a tab,
 * a carriage return or a line feed, or with spaces before one of = + - @, is prefixed with ' so
 * a spreadsheet shows it as text instead of running it as a formula.
 */
export interface Column<R> {
  header: string;
  value: (r: R) => string | number | null;
}

export function safeCell(v: string | number | null): string | number {
  if (v === null) return '';
  if (typeof v === 'number') return v;
  return /^(?:[\t\r\n]|\s*[=+\-@])/.test(v) ? `'${v}` : v;
}

export function streamCsv<R>(reply: FastifyReply, filename: string, columns: Column<R>[], rows: AsyncIterable<R>, onError: (err: Error) => void) {
  // csv-stringify quotes the separator, quotes and its own record delimiter (\r\n); a lone \r or \n must be quoted too.
  const out = stringify({ bom: true, header: true, columns: columns.map((c) => c.header), record_delimiter: 'windows', quoted_match: /[\r\n",]/ });
  void (async () => {
    try {
      for await (const r of rows) {
        if (!out.write(columns.map((c) => safeCell(c.value(r))))) await once(out, 'drain');
      }
      out.end();
    } catch (err) {
      onError(err as Error);
      out.destroy(err as Error);
    }
  })();
  return reply.code(200)
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(filename)}`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(out);
}
