import helmet, { type HelmetOptions } from 'helmet';

/**
 * The response headers helmet sets for these options, worked out once.
 *
 * @fastify/helmet calls `helmet(options)` on every request, building every middleware anew:
 * 21–31 µs of the ~70 µs a bare route costs (BENCHMARKS.md). With the content security policy
 * off (pages set their own) no helmet middleware looks at the request, so the headers are the
 * same for every response and helmet itself can tell us what they are.
 */
export function securityHeaders(options: HelmetOptions): Record<string, string> {
  if (options.contentSecurityPolicy !== false) throw new Error('securityHeaders: a content security policy may depend on the request');
  const headers: Record<string, string> = {};
  const res = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)({} as never, res as never, (err?: unknown) => {
    if (err) throw err;
  });
  return headers;
}
