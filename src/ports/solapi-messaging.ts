import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { eucKrBytes, SMS_MAX_BYTES, type DeliveryReport, type MessageChannel, type MessageRequest, type MessagingProvider, type SendOutcome } from './messaging.js';
import { callProvider, obj, ProviderUnreachable, str, type ProviderAnswer } from './provider-http.js';

export interface SolapiSettings {
  apiKey: string;
  apiSecret: string;
  /** https://api.solapi.com unless pointed at the rehearsal fake (SUNAP_SOLAPI_API_URL). */
  baseUrl: string;
  /** The sender number registered with Solapi, digits only (SUNAP_SOLAPI_SENDER). */
  sender: string;
  /** The Kakao channel linked to Solapi (SUNAP_SOLAPI_PFID). */
  pfId: string;
  /** The approved ALIMTALK template of the invoice message (SUNAP_SOLAPI_TEMPLATE_ID). */
  templateId: string;
  timeoutMs: number;
}

/** The SMS/LMS byte rule is the port's (messaging.ts); re-exported for the adapter's callers. */
export { eucKrBytes, SMS_MAX_BYTES };

/** `Authorization: HMAC-SHA256 apiKey=…, date=…, salt=…, signature=…`: a new date and salt on every call (a signature is single-use). */
export function solapiAuthorization(apiKey: string, apiSecret: string, now = new Date()): string {
  const date = now.toISOString();
  const salt = randomBytes(16).toString('hex');
  const signature = createHmac('sha256', apiSecret).update(date + salt).digest('hex');
  return `HMAC-SHA256 apiKey=${apiKey}, date=${date}, salt=${salt}, signature=${signature}`;
}

/** Delivered, per Solapi's status codes; 2000 (accepted) and 3000 (with the carrier) are still on their way; any other code failed. */
const DELIVERED = '4000';
const PENDING = new Set(['2000', '3000']);
/** How far back a retry looks for the message its lost answer may have created. */
const LOOKBACK_MS = 2 * 86_400_000;
const LOOKUP_PAGES = 5;

/**
 * Solapi behind the MessagingProvider port (docs/going-live.md, "Solapi"): ALIMTALK with the
 * approved template and its variables, SMS or LMS by the text's EUC-KR length, and
 * ALIMTALK_THEN_SMS through Solapi's own fallback (`disableSms: false`). Solapi charges only
 * what it delivers and tells which type carried a message in its delivery report, so every
 * accepted message is settled when that report arrives (`channel: null`).
 *
 * Solapi takes no idempotency key: each message carries the send's key as a custom field,
 * and a retry after a lost answer looks the message up by that field before sending again.
 */
export class SolapiMessaging implements MessagingProvider {
  readonly providerFallback = true;

  constructor(private readonly s: SolapiSettings, private readonly log?: Logger) {}

  private call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ProviderAnswer> {
    return callProvider(this.s.baseUrl + path, {
      method, timeoutMs: this.s.timeoutMs, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: solapiAuthorization(this.s.apiKey, this.s.apiSecret), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
  }

  /** A refusal of Sunap's own credentials or clock, in words an operator can act on. */
  private credentialProblem(answer: ProviderAnswer): string | null {
    if (answer.status !== 401 && answer.status !== 403) return null;
    const code = str(answer.body, 'errorCode');
    const problem = code === 'RequestTimeTooSkewed'
      ? 'the server clock is more than 15 minutes off the provider\'s; correct the server\'s time'
      : 'check SUNAP_SOLAPI_API_KEY and SUNAP_SOLAPI_API_SECRET (sunap doctor)';
    return `the messaging provider refused Sunap's credentials (${code || answer.status}: ${str(answer.body, 'errorMessage')}); ${problem}`;
  }

  async send(req: MessageRequest): Promise<SendOutcome> {
    if (req.retry) {
      const seen = await this.find(req.idempotencyKey, req.to);
      if (seen) return { accepted: true, messageId: seen, channel: null };
    }
    const message: Record<string, unknown> = { to: req.to, from: this.s.sender, text: req.text, customFields: { sunapKey: req.idempotencyKey } };
    if (req.channel === 'ALIMTALK') {
      message.kakaoOptions = { pfId: this.s.pfId, templateId: this.s.templateId, variables: req.variables ?? {}, disableSms: !req.smsFallback };
    } else {
      message.type = eucKrBytes(req.text) <= SMS_MAX_BYTES ? 'SMS' : 'LMS';
      message.autoTypeDetect = false;
    }
    const answer = await this.call('POST', '/messages/v4/send-many/detail', { messages: [message], showMessageList: true });
    if (answer.status >= 500) throw new Error(`solapi: send answered ${answer.status} ${str(answer.body, 'errorCode')}`);
    const refused = this.credentialProblem(answer);
    if (refused) {
      this.log?.error({ code: str(answer.body, 'errorCode') }, `solapi: ${refused}`);
      return { accepted: false, error: refused };
    }
    if (answer.status !== 200) {
      return { accepted: false, error: `${str(answer.body, 'errorCode') || answer.status}: ${str(answer.body, 'errorMessage') || 'refused by the messaging provider'}` };
    }
    const failed = list(answer.body, 'failedMessageList')[0];
    if (failed) return { accepted: false, error: `${str(failed, 'statusMessage') || 'refused by the messaging provider'} (${str(failed, 'statusCode')})` };
    const accepted = list(answer.body, 'messageList')[0];
    const messageId = str(accepted, 'messageId');
    if (!messageId) throw new Error('solapi: the send was answered without a message id');
    return { accepted: true, messageId, channel: null };
  }

  /** The message id a lost answer had, found by the send's key among the recipient's recent messages. */
  private async find(key: string, to: string): Promise<string | null> {
    const since = new Date(Date.now() - LOOKBACK_MS).toISOString();
    let startKey = '';
    for (let page = 0; page < LOOKUP_PAGES; page++) {
      const q = new URLSearchParams({ to, dateType: 'CREATED', startDate: since, limit: '100' });
      if (startKey) q.set('startKey', startKey);
      const answer = await this.call('GET', `/messages/v4/list?${q}`);
      if (answer.status !== 200) throw new Error(`solapi: look-up answered ${answer.status} ${str(answer.body, 'errorCode')}`);
      for (const m of Object.values(obj(answer.body, 'messageList') ?? {})) {
        // A separate replacement message may carry the same custom fields: the key names the original.
        if (str(obj(m, 'customFields'), 'sunapKey') === key && !isReplacement(m as Record<string, unknown>)) return str(m, 'messageId');
      }
      startKey = str(answer.body, 'nextKey');
      if (!startKey) return null;
    }
    return null;
  }

  /** The messages Solapi lists for a query, by message id (its `messageList` is keyed by id). */
  private async lookUp(query: Record<string, string>): Promise<Map<string, Record<string, unknown>>> {
    const answer = await this.call('GET', `/messages/v4/list?${new URLSearchParams(query)}`);
    if (answer.status !== 200) throw new Error(`solapi: status of a message answered ${answer.status} ${str(answer.body, 'errorCode')}`);
    const found = new Map<string, Record<string, unknown>>();
    for (const [key, m] of Object.entries(obj(answer.body, 'messageList') ?? {})) {
      if (m && typeof m === 'object' && !Array.isArray(m)) found.set(str(m, 'messageId') || key, m as Record<string, unknown>);
    }
    return found;
  }

  /**
   * Solapi's fallback can be reported in two shapes, and both are read (docs/going-live.md,
   * "Solapi"): the ALIMTALK record rewritten as the SMS/LMS that replaced it (`type` SMS/LMS,
   * or `replacement: true`, under the original id), or the ALIMTALK record left failed and a
   * separate replacement message beside it, named in the original's `replacements` or found
   * in its group as the message with `replacement: true` to the same number. The report is
   * then the replacement's: a delivered LMS is a delivery at the SMS price, never an ALIMTALK
   * failure refunded in full.
   */
  async status(messageId: string): Promise<DeliveryReport> {
    const m = (await this.lookUp({ messageId })).get(messageId);
    if (!m) return { delivery: 'FAILED' };
    const report = read(m);
    if (report.channel !== 'ALIMTALK' || report.delivery !== 'FAILED') return report;
    const replacement = await this.replacementOf(m, messageId);
    return replacement ? { ...read(replacement), channel: 'SMS' } : report;
  }

  /** The separate message that replaced a failed ALIMTALK one, or null when there is none. */
  private async replacementOf(original: Record<string, unknown>, originalId: string): Promise<Record<string, unknown> | null> {
    const named = Array.isArray(original.replacements) ? original.replacements : [];
    const ids = named.map((r) => typeof r === 'string' ? r : str(r, 'messageId')).filter((id) => id && id !== originalId);
    for (const id of ids) {
      const found = (await this.lookUp({ messageId: id })).get(id);
      if (found) return found;
    }
    const groupId = str(original, 'groupId');
    if (!groupId) return null;
    const to = str(original, 'to');
    const group = await this.lookUp({ groupId, ...(to ? { to } : {}), limit: '100' });
    for (const [id, x] of group) if (id !== originalId && isReplacement(x) && (!to || str(x, 'to') === to)) return x;
    return null;
  }

  async checkCredentials(): Promise<{ ok: boolean; detail: string }> {
    const where = `solapi at ${this.s.baseUrl}`;
    let answer: ProviderAnswer;
    try {
      answer = await this.call('GET', '/messages/v4/list?limit=1');
    } catch (err) {
      if (err instanceof ProviderUnreachable) return { ok: false, detail: `${where}: ${err.message}` };
      throw err;
    }
    if (answer.status === 200) return { ok: true, detail: `${where}: the API key was accepted; sender ${this.s.sender}, channel ${this.s.pfId}, template ${this.s.templateId}` };
    return { ok: false, detail: `${where}: ${this.credentialProblem(answer) ?? `unexpected answer ${answer.status} ${str(answer.body, 'errorCode')}`}` };
  }
}

/** `replacement` comes as a boolean or as 0/1. */
function isReplacement(m: Record<string, unknown>): boolean {
  return m.replacement === true || m.replacement === 1;
}

/** One listed message's delivery: ATA is ALIMTALK; a replacement (Solapi's own fallback) or an SMS/LMS type is the SMS price. */
function read(m: Record<string, unknown>): DeliveryReport {
  const code = str(m, 'statusCode');
  const channel: MessageChannel = str(m, 'type') === 'ATA' && !isReplacement(m) ? 'ALIMTALK' : 'SMS';
  if (code === DELIVERED) return { delivery: 'DELIVERED', channel };
  if (!code || PENDING.has(code)) return { delivery: 'ACCEPTED', channel };
  return { delivery: 'FAILED', channel };
}

function list(body: unknown, key: string): unknown[] {
  if (!body || typeof body !== 'object') return [];
  const v = (body as Record<string, unknown>)[key];
  return Array.isArray(v) ? v : [];
}
