import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { FakeHttpsServer, type FakeAnswer, type FakeRequest } from './https.js';

/**
 * A faithful local fake of Solapi's messaging API, as docs/going-live.md describes it: the
 * HMAC-SHA256 Authorization header checked exactly (API key, signature over date + salt with
 * the API secret, a date within 15 minutes, a signature never reused), the registered sender
 * number, Kakao channel and approved ALIMTALK template (the variables must fill it, and a text
 * sent along must be it, filled), `send-many/detail`, `list`, SMS/LMS by EUC-KR length, and
 * Solapi's own ALIMTALK → SMS fallback. The recipient's last four digits choose what happens:
 *
 * | number ends in | outcome |
 * |---|---|
 * | 9999 | no KakaoTalk: ALIMTALK fails; with the fallback (disableSms false) an SMS/LMS replaces it and is delivered, reported as the original record rewritten (type SMS/LMS, `replacement: true`, same id) |
 * | 9998 | the same fallback reported the other way Solapi's docs allow: the ALIMTALK record stays failed (3104) and names in `replacements` a separate SMS/LMS message (`replacement: true`, same group, number and custom fields), delivered |
 * | 0000 | accepted, then fails on every channel |
 * | 1111 | refused at once (listed in failedMessageList) |
 * | 5555 | accepted, but the answer is never sent (the caller times out) |
 * | 7777 | the first request answers 500 and sends nothing; later ones work |
 * | anything else | accepted and delivered on the type sent (ATA, SMS or LMS) |
 *
 * A message is delivered (statusCode 4000) or failed the first time it is listed.
 */
export const FAKE_SOLAPI = {
  apiKey: 'NCSSUNAPREHEARSAL',
  apiSecret: 'SUNAPREHEARSALSECRET0123456789AB',
  sender: '0212345678',
  pfId: 'KA01PF_SUNAP_REHEARSAL',
  templateId: 'KA01TP_SUNAP_INVOICE',
} as const;

export interface FakeMessage {
  messageId: string;
  groupId: string;
  to: string;
  from: string;
  text: string;
  /** What was asked: ATA, SMS or LMS. */
  requestedType: 'ATA' | 'SMS' | 'LMS';
  /** What carried it once delivered (after a fallback: SMS or LMS). */
  type: 'ATA' | 'SMS' | 'LMS';
  replacement: boolean;
  /** The separate messages that replaced this one (the 9998 shape). */
  replacements: string[];
  disableSms: boolean;
  statusCode: string;
  customFields: Record<string, string>;
  dateCreated: string;
}

function eucKrBytes(text: string): number {
  let n = 0;
  for (const ch of text) n += ch.codePointAt(0)! < 0x80 ? 1 : 2;
  return n;
}

const fail = (status: number, errorCode: string, errorMessage: string): FakeAnswer => ({ status, body: { errorCode, errorMessage } });
const SKEW_MS = 15 * 60_000;

export class FakeSolapi {
  readonly server = new FakeHttpsServer((r) => this.handle(r));
  readonly requests: FakeRequest[] = [];
  /** Every registered message, in order: more than one per custom key would be a double send. */
  readonly messages: FakeMessage[] = [];
  /** The fake's clock offset from real time, in ms (a skewed server clock is Sunap's, but this tests the check). */
  clockOffsetMs = 0;
  private readonly usedSignatures = new Map<string, number>();
  private readonly faulted = new Set<string>();
  private seq = 0;

  constructor(readonly settings: { apiKey: string; apiSecret: string; sender: string; pfId: string; templateId: string; template: string }) {}

  get url(): string {
    return this.server.url;
  }

  async start(port = 0, tlsDir?: string): Promise<this> {
    await this.server.start(port, tlsDir);
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** The messages sent to a number. */
  to(phone: string): FakeMessage[] {
    return this.messages.filter((m) => m.to === phone);
  }

  private authProblem(header: string | undefined): FakeAnswer | null {
    const m = /^HMAC-SHA256 apiKey=([^,]+), date=([^,]+), salt=([^,]+), signature=([0-9a-f]+)$/.exec(header ?? '');
    if (!m) return fail(401, 'InvalidAuthorization', 'Authorization 헤더 형식이 올바르지 않습니다.');
    const [, apiKey, date, salt, signature] = m as unknown as [string, string, string, string, string];
    if (apiKey !== this.settings.apiKey) return fail(401, 'InvalidApiKey', '유효하지 않은 API Key 입니다.');
    const at = Date.parse(date);
    const now = Date.now() + this.clockOffsetMs;
    if (!/^\d{4}-\d{2}-\d{2}T/.test(date) || Number.isNaN(at) || Math.abs(now - at) > SKEW_MS) {
      return fail(401, 'RequestTimeTooSkewed', '요청 시각이 서버 시각과 15분 이상 차이가 납니다.');
    }
    if (salt.length < 12 || salt.length > 64) return fail(401, 'InvalidAuthorization', 'salt는 12~64바이트여야 합니다.');
    const expected = createHmac('sha256', this.settings.apiSecret).update(date + salt).digest();
    const given = Buffer.from(signature, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return fail(401, 'SignatureDoesNotMatch', '서명이 일치하지 않습니다.');
    for (const [s, t] of this.usedSignatures) if (now - t > SKEW_MS) this.usedSignatures.delete(s);
    if (this.usedSignatures.has(signature)) return fail(401, 'DuplicatedSignature', '15분 안에 이미 사용된 서명입니다.');
    this.usedSignatures.set(signature, now);
    return null;
  }

  private handle(r: FakeRequest): FakeAnswer {
    this.requests.push(r);
    const header = r.headers.authorization;
    const refused = this.authProblem(typeof header === 'string' ? header : undefined);
    if (refused) return refused;
    if (r.method === 'POST' && r.path === '/messages/v4/send-many/detail') return this.sendMany(r.json);
    if (r.method === 'GET' && r.path === '/messages/v4/list') return this.list(r.query);
    return fail(404, 'NotFound', '존재하지 않는 API 입니다.');
  }

  private sendMany(b: any): FakeAnswer {
    if (!b || !Array.isArray(b.messages) || b.messages.length === 0) return fail(400, 'ValidationError', 'messages: 1건 이상 입력해야 합니다.');
    const groupId = `G4V${Date.now()}${randomBytes(4).toString('hex').toUpperCase()}`;
    const failed: unknown[] = [];
    const accepted: FakeMessage[] = [];
    let hold = false;
    for (const m of b.messages) {
      if (typeof m.to !== 'string' || !/^\d{9,11}$/.test(m.to)) return fail(400, 'ValidationError', 'to: 수신번호 형식이 올바르지 않습니다.');
      if (m.to.endsWith('7777') && !this.faulted.has(m.to)) {
        this.faulted.add(m.to);
        return fail(500, 'InternalError', '일시적인 오류입니다.');
      }
      const problem = this.check(m);
      if (problem || m.to.endsWith('1111')) {
        failed.push({ to: m.to, from: m.from, type: m.type ?? 'ATA', country: '82', messageId: '', statusCode: problem?.code ?? '1020', statusMessage: problem?.message ?? '수신번호를 확인해주세요.', customFields: m.customFields ?? {} });
        continue;
      }
      const requestedType: FakeMessage['requestedType'] = m.kakaoOptions ? 'ATA' : m.type;
      const msg: FakeMessage = {
        messageId: `M4V${Date.now()}${(++this.seq).toString().padStart(6, '0')}`, groupId, to: m.to, from: m.from, text: m.text ?? '',
        requestedType, type: requestedType, replacement: false, replacements: [], disableSms: m.kakaoOptions?.disableSms !== false, statusCode: '2000',
        customFields: m.customFields ?? {}, dateCreated: new Date().toISOString(),
      };
      this.messages.push(msg);
      accepted.push(msg);
      if (m.to.endsWith('5555')) hold = true;
    }
    if (hold) return 'hold';
    const total = b.messages.length;
    return {
      status: 200,
      body: {
        groupInfo: { groupId, status: 'SENDING', count: { total, registeredSuccess: accepted.length, registeredFailed: failed.length } },
        failedMessageList: failed,
        ...(b.showMessageList ? { messageList: accepted.map((x) => ({ messageId: x.messageId, statusCode: '2000', statusMessage: '정상 접수(이통사로 접수 예정) ', customFields: x.customFields })) } : {}),
      },
    };
  }

  /** Why Solapi would refuse a message at registration, or null. */
  private check(m: any): { code: string; message: string } | null {
    if (m.from !== this.settings.sender) return { code: '1062', message: '발신번호가 등록되지 않았습니다.' };
    if (m.kakaoOptions) {
      const k = m.kakaoOptions;
      if (k.pfId !== this.settings.pfId) return { code: '3010', message: '연동되지 않은 카카오 채널입니다.' };
      if (k.templateId !== this.settings.templateId) return { code: '3011', message: '존재하지 않는 알림톡 템플릿입니다.' };
      const vars = (k.variables ?? {}) as Record<string, unknown>;
      const names = [...new Set(this.settings.template.match(/#\{[^}]+\}/g) ?? [])];
      const missing = names.filter((n) => typeof vars[n] !== 'string' || (vars[n] as string).length === 0);
      if (missing.length) return { code: '3012', message: `템플릿 변수가 비어 있습니다: ${missing.join(', ')}` };
      const filled = this.settings.template.replace(/#\{[^}]+\}/g, (n) => vars[n] as string);
      if (m.text !== undefined && m.text !== filled) return { code: '3013', message: '내용이 승인된 템플릿과 일치하지 않습니다.' };
      m.text = filled;
      return null;
    }
    if (typeof m.text !== 'string' || m.text.length === 0) return { code: '1010', message: '메시지 내용이 없습니다.' };
    if (m.type === 'SMS' && eucKrBytes(m.text) > 90) return { code: '1011', message: 'SMS는 90바이트까지입니다. LMS로 보내세요.' };
    if (m.type !== 'SMS' && m.type !== 'LMS') return { code: '1012', message: '메시지 타입이 올바르지 않습니다.' };
    if (eucKrBytes(m.text) > 2000) return { code: '1013', message: '2000바이트를 넘었습니다.' };
    return null;
  }

  /** Delivers or fails a message the first time anyone asks about it. */
  private settle(m: FakeMessage): void {
    if (m.statusCode !== '2000') return;
    if (m.to.endsWith('0000')) {
      m.statusCode = '3040';
      return;
    }
    if (m.type === 'ATA' && (m.to.endsWith('9999') || m.to.endsWith('9998'))) {
      if (m.disableSms) {
        m.statusCode = '3104';
        return;
      }
      if (m.to.endsWith('9998')) {
        const type = eucKrBytes(m.text) > 90 ? 'LMS' : 'SMS';
        const replacement: FakeMessage = {
          ...m, messageId: `M4V${Date.now()}${(++this.seq).toString().padStart(6, '0')}`, requestedType: type, type, replacement: true,
          replacements: [], disableSms: true, statusCode: '2000', dateCreated: new Date().toISOString(),
        };
        this.messages.push(replacement);
        m.replacements.push(replacement.messageId);
        m.statusCode = '3104';
        return;
      }
      m.replacement = true;
      m.type = eucKrBytes(m.text) > 90 ? 'LMS' : 'SMS';
    }
    m.statusCode = '4000';
  }

  private list(q: URLSearchParams): FakeAnswer {
    let found = this.messages.slice().reverse();
    const messageId = q.get('messageId');
    if (messageId) found = found.filter((m) => m.messageId === messageId);
    const groupId = q.get('groupId');
    if (groupId) found = found.filter((m) => m.groupId === groupId);
    const to = q.get('to');
    if (to) found = found.filter((m) => m.to === to);
    const since = q.get('startDate');
    if (since) found = found.filter((m) => m.dateCreated >= since);
    const startKey = q.get('startKey');
    if (startKey) found = found.slice(Math.max(0, found.findIndex((m) => m.messageId === startKey)));
    const limit = Math.min(500, Number(q.get('limit') ?? 20) || 20);
    const page = found.slice(0, limit);
    for (const m of page) this.settle(m);
    const messageList = Object.fromEntries(page.map((m) => [m.messageId, {
      messageId: m.messageId, groupId: m.groupId, to: m.to, from: m.from, text: m.text, type: m.type, statusCode: m.statusCode,
      status: m.statusCode === '4000' ? 'COMPLETE' : m.statusCode === '2000' ? 'PENDING' : 'FAILED',
      reason: m.statusCode === '4000' ? '정상 처리' : null, replacement: m.replacement,
      replacements: m.replacements.map((id) => ({ messageId: id })), customFields: m.customFields, country: '82',
      dateCreated: m.dateCreated, dateUpdated: m.dateCreated,
    }]));
    return { status: 200, body: { startKey, nextKey: found.length > limit ? found[limit]!.messageId : null, limit, messageList } };
  }
}
