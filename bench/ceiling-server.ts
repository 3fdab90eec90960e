// The ceiling: a bare node:http server that reads the request and answers a pre-serialized JSON
// body the size of a real searchPayment answer. Nothing a Node service can do per request is
// cheaper, so its requests/s on this machine is the yardstick for Sunap's. Run as a child
// process by bench/run.ts (BENCH_CEILING_PORT, BENCH_CEILING_BODY = a file with the body).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.BENCH_CEILING_BODY!);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.BENCH_CEILING_PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
