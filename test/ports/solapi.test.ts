import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { eucKrBytes, SolapiMessaging } from '../../src/ports/solapi-messaging.js';
import type { MessageRequest } from '../../src/ports/messaging.js';
import { freePort } from '../helpers/app.js';
import { captureLog } from '../helpers/log.js';
import { ScriptedServer } from '../helpers/scripted-server.js';

/**
 * The Solapi adapter's mapping of each answer Solapi documents (docs/going-live.md, "Solapi"),
 * one scripted answer at a time: what is sent, what a refusal, a failure or a lost answer
 * becomes, how a retry finds the message a lost answer created, and how a delivery report reads.
 * The behaviour against a fake that checks Solapi's auth is in test/live/adapters and messages.
 */
describe('Solapi adapter, answer by answer', () => {
  // Any other answer is a 404, as for a path Solapi does not have.
  const server = new ScriptedServer({ status: 404, body: { errorCode: 'NotFound' } });
  const { seen, script } = server;
  let base: string;
  before(async () => {
    base = (await server.start()).url;
  });
  after(() => server.close());
  beforeEach(() => server.reset());
  const { lines, log } = captureLog();
  const solapi = () => new SolapiMessaging({ apiKey: 'KEY', apiSecret: 'SECRET', baseUrl: base, sender: '0212345678', pfId: 'PF1', templateId: 'TPL1', timeoutMs: 1000 }, log);
  const sms = (over: Partial<MessageRequest> = {}): MessageRequest => ({ idempotencyKey: 'send-1', channel: 'SMS', to: '01012345678', text: '안내', link: '', ...over });
  const accepted = (id = 'M1') => ({ status: 200, body: { failedMessageList: [], messageList: [{ messageId: id }] } });

  test('EUC-KR length: U+007F counts one byte, U+0080 and above two', () => {
    assert.equal(eucKrBytes('\u007f'), 1);
    assert.equal(eucKrBytes('\u0080'), 2);
    assert.equal(eucKrBytes('a가é'), 5);
  });

  test('a send is one POST of JSON: SMS with its type fixed, ALIMTALK with the template and the fallback as asked', async () => {
    script.push(accepted('M1'), accepted('M2'), accepted('M3'));
    assert.deepEqual(await solapi().send(sms()), { accepted: true, messageId: 'M1', channel: null });
    const sent = JSON.parse(seen[0]!.body);
    assert.equal(seen[0]!.method, 'POST');
    assert.equal(seen[0]!.path, '/messages/v4/send-many/detail');
    assert.equal(seen[0]!.headers['content-type'], 'application/json');
    assert.match(String(seen[0]!.headers.authorization), /^HMAC-SHA256 apiKey=KEY, date=/);
    assert.deepEqual(sent, {
      messages: [{ to: '01012345678', from: '0212345678', text: '안내', customFields: { sunapKey: 'send-1' }, type: 'SMS', autoTypeDetect: false }],
      showMessageList: true,
    });
    await solapi().send(sms({ channel: 'ALIMTALK', smsFallback: true, variables: { a: '1' } }));
    await solapi().send(sms({ channel: 'ALIMTALK', smsFallback: false }));
    const [withFallback, without] = [JSON.parse(seen[1]!.body).messages[0], JSON.parse(seen[2]!.body).messages[0]];
    assert.deepEqual(withFallback.kakaoOptions, { pfId: 'PF1', templateId: 'TPL1', variables: { a: '1' }, disableSms: false });
    assert.deepEqual(without.kakaoOptions, { pfId: 'PF1', templateId: 'TPL1', variables: {}, disableSms: true });
    assert.equal(withFallback.type, undefined);
    assert.equal(withFallback.autoTypeDetect, undefined);
  });

  test('a look-up is a GET without a body or a content type', async () => {
    script.push({ status: 200, body: { messageList: {} } });
    await solapi().status('M1');
    assert.equal(seen[0]!.method, 'GET');
    assert.equal(seen[0]!.body, '');
    assert.equal(seen[0]!.headers['content-type'], undefined);
    assert.equal(seen[0]!.query.get('messageId'), 'M1');
  });

  test('a server error is thrown (the send is retried); its code is in the message', async () => {
    script.push({ status: 500, body: { errorCode: 'InternalError' } }, { status: 503, body: {} });
    await assert.rejects(solapi().send(sms()), (e: Error) => e.message === 'solapi: send answered 500 InternalError');
    await assert.rejects(solapi().send(sms()), (e: Error) => e.message === 'solapi: send answered 503 ');
  });

  test('401 and 403 are Sunap\'s credentials: refused in words an operator can act on, and logged with the code', async () => {
    lines.length = 0;
    script.push({ status: 401, body: { errorCode: 'InvalidApiKey', errorMessage: '유효하지 않은 API Key 입니다.' } }, { status: 403, body: {} });
    const first = await solapi().send(sms());
    const expected = 'the messaging provider refused Sunap\'s credentials (InvalidApiKey: 유효하지 않은 API Key 입니다.); check SUNAP_SOLAPI_API_KEY and SUNAP_SOLAPI_API_SECRET (sunap doctor)';
    assert.deepEqual(first, { accepted: false, error: expected });
    assert.deepEqual(lines.map((l) => [l.level, l.code, l.msg]), [[50, 'InvalidApiKey', `solapi: ${expected}`]]);
    const second = await solapi().send(sms());
    assert.deepEqual(second, { accepted: false, error: 'the messaging provider refused Sunap\'s credentials (403: ); check SUNAP_SOLAPI_API_KEY and SUNAP_SOLAPI_API_SECRET (sunap doctor)' });
  });

  test('any other refusal names its code and message, or the status and a plain reason', async () => {
    script.push({ status: 400, body: { errorCode: 'ValidationError', errorMessage: 'to: 수신번호 형식이 올바르지 않습니다.' } }, { status: 402, body: {} });
    assert.deepEqual(await solapi().send(sms()), { accepted: false, error: 'ValidationError: to: 수신번호 형식이 올바르지 않습니다.' });
    assert.deepEqual(await solapi().send(sms()), { accepted: false, error: '402: refused by the messaging provider' });
  });

  test('a message in failedMessageList is refused with its status message and code; without a message, a plain reason', async () => {
    script.push(
      { status: 200, body: { failedMessageList: [{ statusCode: '1020', statusMessage: '수신번호를 확인해주세요.' }], messageList: [] } },
      { status: 200, body: { failedMessageList: [{ statusCode: '1062' }], messageList: [] } },
    );
    assert.deepEqual(await solapi().send(sms()), { accepted: false, error: '수신번호를 확인해주세요. (1020)' });
    assert.deepEqual(await solapi().send(sms()), { accepted: false, error: 'refused by the messaging provider (1062)' });
  });

  test('an accepted answer without a message id is an error, not an acceptance; so is a 200 that is not JSON', async () => {
    script.push({ status: 200, body: { failedMessageList: [], messageList: [{}] } });
    await assert.rejects(solapi().send(sms()), /the send was answered without a message id/);
    script.push({ status: 200, body: 'not an object' }, { status: 200, body: null }, { status: 200, body: { failedMessageList: 'none', messageList: {} } });
    await assert.rejects(solapi().send(sms()), (e: Error) => e.message === 'solapi: the send was answered without a message id');
    await assert.rejects(solapi().send(sms()), (e: Error) => e.message === 'solapi: the send was answered without a message id');
    // Lists that are not arrays are read as empty: no failure, and no message id.
    await assert.rejects(solapi().send(sms()), (e: Error) => e.message === 'solapi: the send was answered without a message id');
  });

  test('the doctor\'s check: accepted with the sender, channel and template named; refused in an operator\'s words; unreachable', async () => {
    script.push({ status: 200, body: { messageList: {} } }, { status: 401, body: { errorCode: 'RequestTimeTooSkewed', errorMessage: 'm' } }, { status: 500, body: { errorCode: 'X' } });
    assert.deepEqual(await solapi().checkCredentials(), { ok: true, detail: `solapi at ${base}: the API key was accepted; sender 0212345678, channel PF1, template TPL1` });
    assert.equal(seen[0]!.query.get('limit'), '1');
    assert.deepEqual(await solapi().checkCredentials(), {
      ok: false, detail: `solapi at ${base}: the messaging provider refused Sunap's credentials (RequestTimeTooSkewed: m); the server clock is more than 15 minutes off the provider's; correct the server's time`,
    });
    assert.deepEqual(await solapi().checkCredentials(), { ok: false, detail: `solapi at ${base}: unexpected answer 500 X` });
    const closed = `http://127.0.0.1:${await freePort()}`;
    const gone = new SolapiMessaging({ apiKey: 'KEY', apiSecret: 'SECRET', baseUrl: closed, sender: 's', pfId: 'p', templateId: 't', timeoutMs: 500 });
    assert.deepEqual(await gone.checkCredentials(), { ok: false, detail: `solapi at ${closed}: GET ${closed}/messages/v4/list: ECONNREFUSED` });
    // Anything but an unanswered call (here a malformed base URL) is a fault of Sunap's own, thrown as it is.
    const broken = new SolapiMessaging({ apiKey: 'KEY', apiSecret: 'SECRET', baseUrl: 'not a url', sender: 's', pfId: 'p', templateId: 't', timeoutMs: 500 });
    await assert.rejects(broken.checkCredentials(), TypeError);
  });

  describe('a retry looks for the message a lost answer created', () => {
    const page = (entries: Record<string, { key: string; id: string }>, nextKey?: string) => ({
      status: 200,
      body: { messageList: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, { messageId: v.id, customFields: { sunapKey: v.key } }])), ...(nextKey ? { nextKey } : {}) },
    });
    test('found on the second page: that message, and nothing is sent again', async () => {
      script.push(page({ a: { key: 'other', id: 'X1' } }, 'K2'), page({ b: { key: 'send-1', id: 'M9' } }));
      assert.deepEqual(await solapi().send(sms({ retry: true })), { accepted: true, messageId: 'M9', channel: null });
      assert.deepEqual(seen.map((s) => s.method), ['GET', 'GET']);
      assert.equal(seen[0]!.query.has('startKey'), false, 'the first page has no start key');
      assert.equal(seen[1]!.query.get('startKey'), 'K2');
      assert.equal(seen[0]!.query.get('to'), '01012345678');
      assert.equal(seen[0]!.query.get('dateType'), 'CREATED');
      assert.equal(seen[0]!.query.get('limit'), '100');
      const since = Date.parse(seen[0]!.query.get('startDate')!);
      assert.ok(Math.abs(Date.now() - 2 * 86_400_000 - since) < 60_000, 'two days back');
    });
    test('not found on the last page: sent once', async () => {
      script.push(page({ a: { key: 'other', id: 'X1' } }), accepted('M2'));
      assert.deepEqual(await solapi().send(sms({ retry: true })), { accepted: true, messageId: 'M2', channel: null });
      assert.deepEqual(seen.map((s) => s.method), ['GET', 'POST']);
    });
    test('at most five pages are read, then it is sent', async () => {
      for (let i = 0; i < 5; i++) script.push(page({}, `K${i + 1}`));
      script.push(accepted('M3'));
      assert.deepEqual(await solapi().send(sms({ retry: true })), { accepted: true, messageId: 'M3', channel: null });
      assert.deepEqual(seen.map((s) => s.method), ['GET', 'GET', 'GET', 'GET', 'GET', 'POST']);
    });
    test('a look-up that fails is an error: nothing is sent blind', async () => {
      script.push({ status: 500, body: { errorCode: 'InternalError' } });
      await assert.rejects(solapi().send(sms({ retry: true })), (e: Error) => e.message === 'solapi: look-up answered 500 InternalError');
      assert.deepEqual(seen.map((s) => s.method), ['GET']);
    });
  });

  describe('Solapi\'s fallback reported as a separate replacement message', () => {
    const list = (entries: Record<string, Record<string, unknown>>) => ({ status: 200, body: { messageList: entries } });
    const failedAta = (extra: Record<string, unknown> = {}) => ({ statusCode: '3104', type: 'ATA', groupId: 'G1', to: '01012345678', ...extra });
    test('named in the original\'s replacements (as an id or an object): the replacement\'s report, as SMS', async () => {
      script.push(list({ M1: failedAta({ replacements: ['M2'] }) }), list({ M2: { statusCode: '4000', type: 'LMS', replacement: true } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'DELIVERED', channel: 'SMS' });
      assert.deepEqual(seen.map((s) => s.query.get('messageId')), ['M1', 'M2']);
      script.push(list({ M1: failedAta({ replacements: [{ messageId: 'M3' }] }) }), list({ M3: { statusCode: '3000', type: 'SMS', replacement: 1 } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'ACCEPTED', channel: 'SMS' }, 'still on its way');
      script.push(list({ M1: failedAta({ replacements: ['M4'] }) }), list({ M4: { statusCode: '3040', type: 'LMS', replacement: true } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'FAILED', channel: 'SMS' }, 'failed on every channel');
    });
    test('not named: found in the original\'s group as the replacement to the same number', async () => {
      script.push(list({ M1: failedAta() }), list({
        M1: failedAta(), X9: { statusCode: '4000', type: 'LMS', replacement: true, to: '01099999999' },
        X8: { statusCode: '4000', type: 'SMS', replacement: false, to: '01012345678' }, M2: { statusCode: '4000', type: 'LMS', replacement: true, to: '01012345678' },
      }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'DELIVERED', channel: 'SMS' });
      assert.equal(seen[1]!.query.get('groupId'), 'G1');
      assert.equal(seen[1]!.query.get('to'), '01012345678');
    });
    test('no replacement anywhere: the ALIMTALK failure as it is; a named id Solapi does not list is passed over', async () => {
      script.push(list({ M1: failedAta({ replacements: ['GONE'] }) }), list({}), list({ M1: failedAta() }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'FAILED', channel: 'ALIMTALK' });
      assert.deepEqual(seen.map((s) => s.query.get('messageId') ?? `group ${s.query.get('groupId')}`), ['M1', 'GONE', 'group G1']);
      script.push(list({ M1: { statusCode: '3104', type: 'ATA' } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'FAILED', channel: 'ALIMTALK' }, 'no group to look in');
    });
    test('a delivered or pending ALIMTALK is not looked past', async () => {
      script.push(list({ M1: { statusCode: '4000', type: 'ATA', groupId: 'G1', replacements: ['M2'] } }), list({ M1: { statusCode: '2000', type: 'ATA', groupId: 'G1' } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'DELIVERED', channel: 'ALIMTALK' });
      assert.deepEqual(await solapi().status('M1'), { delivery: 'ACCEPTED', channel: 'ALIMTALK' });
      assert.equal(seen.length, 2, 'one look-up each');
    });
    test('what is read of a listing: entries that are not messages are skipped, an entry is known by its messageId, the group asked 100 at a time', async () => {
      script.push(list({ M1: null as unknown as Record<string, unknown> }), list({ M1: 'x' as unknown as Record<string, unknown> }), list({ M1: [] as unknown as Record<string, unknown> }));
      for (let i = 0; i < 3; i++) assert.deepEqual(await solapi().status('M1'), { delivery: 'FAILED' });
      script.push(list({ K9: { messageId: 'M1', statusCode: '4000', type: 'ATA' } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'DELIVERED', channel: 'ALIMTALK' }, 'found by its messageId under another key');
      seen.length = 0;
      script.push(list({ M1: failedAta({ replacements: ['M1', '', { messageId: '' }, { other: 1 }, 'M2'] }) }), list({ M2: { statusCode: '4000', type: 'LMS', replacement: true } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'DELIVERED', channel: 'SMS' });
      assert.deepEqual(seen.map((x) => x.query.get('messageId')), ['M1', 'M2'], 'neither the original itself nor an empty id is looked up');
      seen.length = 0;
      script.push(list({ M1: failedAta() }), list({ M1: failedAta({ replacement: true }), M3: { statusCode: '4000', type: 'SMS', replacement: true, to: '01012345678' } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'DELIVERED', channel: 'SMS' }, 'the original is never its own replacement');
      assert.equal(seen[1]!.query.get('limit'), '100');
      seen.length = 0;
      script.push(list({ M1: { statusCode: '3104', type: 'ATA', groupId: 'G2' } }), list({ M4: { statusCode: '3000', type: 'LMS', replacement: true, to: '01099990000' } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'ACCEPTED', channel: 'SMS' }, 'an original without a number: the group\'s replacement');
      assert.equal(seen[1]!.query.has('to'), false);
      script.push(list({ M1: failedAta() }), list({ M5: { statusCode: '4000', type: 'LMS', replacement: true, to: '01099990000' } }));
      assert.deepEqual(await solapi().status('M1'), { delivery: 'FAILED', channel: 'ALIMTALK' }, 'a replacement to another number is not this one\'s');
    });
    test('Solapi falls back by itself: the adapter says so', () => {
      assert.equal(solapi().providerFallback, true);
    });
    test('a retry\'s look-up by key skips a replacement carrying the same custom fields: the original is the send\'s message', async () => {
      script.push({ status: 200, body: { messageList: {
        M2: { messageId: 'M2', replacement: true, customFields: { sunapKey: 'send-1' } },
        M1: { messageId: 'M1', replacement: false, customFields: { sunapKey: 'send-1' } },
      } } });
      assert.deepEqual(await solapi().send(sms({ retry: true })), { accepted: true, messageId: 'M1', channel: null });
    });
  });

  test('delivery reports: 4000 delivered, 2000/3000/none on the way, anything else failed; ATA is ALIMTALK unless replaced', async () => {
    const report = (m: Record<string, unknown> | null) => ({ status: 200, body: { messageList: m ? { M1: m } : {} } });
    const cases: [Record<string, unknown> | null, unknown][] = [
      [{ statusCode: '4000', type: 'ATA' }, { delivery: 'DELIVERED', channel: 'ALIMTALK' }],
      [{ statusCode: '4000', type: 'ATA', replacement: true }, { delivery: 'DELIVERED', channel: 'SMS' }],
      [{ statusCode: '4000', type: 'ATA', replacement: 1 }, { delivery: 'DELIVERED', channel: 'SMS' }],
      [{ statusCode: '4000', type: 'LMS' }, { delivery: 'DELIVERED', channel: 'SMS' }],
      [{ statusCode: '2000', type: 'ATA' }, { delivery: 'ACCEPTED', channel: 'ALIMTALK' }],
      [{ statusCode: '3000', type: 'SMS' }, { delivery: 'ACCEPTED', channel: 'SMS' }],
      [{ type: 'SMS' }, { delivery: 'ACCEPTED', channel: 'SMS' }],
      [{ statusCode: '3059', type: 'ATA' }, { delivery: 'FAILED', channel: 'ALIMTALK' }],
      [null, { delivery: 'FAILED' }],
    ];
    for (const [m, expected] of cases) {
      script.push(report(m));
      assert.deepEqual(await solapi().status('M1'), expected, JSON.stringify(m));
    }
    script.push({ status: 404, body: { errorCode: 'NotFound' } });
    await assert.rejects(solapi().status('M1'), (e: Error) => e.message === 'solapi: status of a message answered 404 NotFound');
  });
});
