import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, lazyRequestLogger, redactUrl } from '../../src/platform/logging.js';
import { captureLog } from '../helpers/log.js';

const flush = () => new Promise((r) => setImmediate(r));

test('the request logger writes what a pino child would: its binding, the message, redaction kept', async () => {
  const { lines, stream } = captureLog();
  const log = lazyRequestLogger(createLogger('info', stream), { reqId: 'req-7' }, {});
  log.info({ body: { password: 'hunter2', API_SIGN: 'f'.repeat(64) } }, 'hello');
  log.error({ n: 1 }, 'bad');
  await flush();
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.reqId, 'req-7');
  assert.equal(lines[0]!.msg, 'hello');
  assert.deepEqual(lines[0]!.body, { password: '[redacted]', API_SIGN: '[redacted]' });
  assert.equal(lines[1]!.level, 50);
  assert.equal(lines[1]!.reqId, 'req-7');
});

test('the request logger follows the level: below it nothing is written, at it the line is', async () => {
  const { lines, stream } = captureLog();
  const log = lazyRequestLogger(createLogger('warn', stream), { reqId: 'r' }, {});
  assert.equal(log.level, 'warn');
  log.info('not written');
  log.debug('not written');
  log.warn('written');
  await flush();
  assert.deepEqual(lines.map((l) => l.msg), ['written']);
  assert.equal(log.isLevelEnabled('info'), false);
  assert.equal(log.isLevelEnabled('warn'), true);
  // A level set on it applies to it alone, as on a pino child.
  log.level = 'debug';
  log.debug('now written');
  await flush();
  assert.deepEqual(lines.map((l) => l.msg), ['written', 'now written']);
});

test('a child of the request logger keeps both bindings', async () => {
  const { lines, stream } = captureLog();
  const log = lazyRequestLogger(createLogger('info', stream), { reqId: 'r1' }, {}).child({ job: 'j1' });
  log.info('x');
  await flush();
  assert.equal(lines[0]!.reqId, 'r1');
  assert.equal(lines[0]!.job, 'j1');
});

test('redactUrl blanks the query and the segments that open something', () => {
  assert.equal(redactUrl('/checkout?tid=1&token=abc'), '/checkout');
  assert.equal(redactUrl('/app/v1/sales/public/bill/INV123/x'), '/app/v1/sales/public/bill/[redacted]/x');
  assert.equal(redactUrl('/pay/INV2026ABC'), '/pay/INV[redacted]');
  assert.equal(redactUrl('/console/invite/tok123'), '/console/invite/[redacted]');
  assert.equal(redactUrl('/api/searchPayment'), '/api/searchPayment');
});
