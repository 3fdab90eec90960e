// Diagnostic preload for a Sunap child (BENCH_MEM_PROBE=FILE): every 200 ms, one JSON line
// with process.memoryUsage() and V8's heap spaces, to see what the RSS is made of.
import { appendFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.BENCH_MEM_PROBE;
if (file) {
  const t = setInterval(() => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 1048576)]));
    const m = process.memoryUsage();
    const mb = (x) => Math.round(x / 1048576);
    appendFileSync(file, JSON.stringify({ t: Date.now(), rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), spaces }) + '\n');
  }, 200);
  t.unref();
}
