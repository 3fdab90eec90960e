import { installmentProblem, LUMP_SUM } from '../gateway/index.js';
import { luhnValid, type CardInput } from '../ports/card-processor.js';
import { kstCompact } from '../platform/kst.js';

/** Form field names of the card form; the logger redacts several of them as a second line of defence. */
export const FIELDS = {
  cardNumber: 'cardNumber',
  expiry: 'expiry',
  birth: 'birth',
  cardPassword: 'cardPassword',
  installment: 'installment',
} as const;
export type FieldName = keyof typeof FIELDS;

/** Korean names used in labels and in error messages, so a message always names its field. */
export const FIELD_LABELS: Record<FieldName, string> = {
  cardNumber: '카드번호',
  expiry: '유효기간',
  birth: '생년월일 또는 사업자등록번호',
  cardPassword: '카드 비밀번호 앞 2자리',
  installment: '할부 기간',
};

export type FieldErrors = Partial<Record<FieldName, string>>;

export type CardFormResult =
  | { ok: true; card: CardInput; installment: string }
  | { ok: false; errors: FieldErrors; installment: string };

/** A urlencoded field as one string: a repeated field keeps its first value, anything else is empty. */
export function field(body: unknown, name: string): string {
  if (!body || typeof body !== 'object') return '';
  const v = (body as Record<string, unknown>)[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' ? s : '';
}

/** Card numbers are typed with spaces or dashes; only digits matter. */
function digitsOf(s: string, allowed: RegExp): string | null {
  const trimmed = s.trim();
  if (!allowed.test(trimmed)) return null;
  return trimmed.replace(/\D/g, '');
}

function realDate(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/**
 * Server-side check of the card form. `nowMs` is the service clock: a card is valid through
 * the last day of its expiry month, in KST. Messages are Korean and start with the field's name.
 * The values themselves are never put into a message.
 */
export function parseCardForm(body: unknown, amount: number, nowMs: number): CardFormResult {
  const errors: FieldErrors = {};
  const L = FIELD_LABELS;

  const number = digitsOf(field(body, FIELDS.cardNumber), /^[\d -]{0,30}$/);
  if (!number) errors.cardNumber = `${L.cardNumber}를 입력해 주세요.`;
  else if (!/^\d{13,19}$/.test(number) || !luhnValid(number)) errors.cardNumber = `${L.cardNumber}가 올바르지 않습니다. 카드에 적힌 번호를 다시 확인해 주세요.`;

  // MM/YY, MM / YY, MMYY or MM/YYYY: phone keypads opened by inputmode=numeric often lack "/".
  let expiryMonth = '';
  let expiryYear = '';
  const exp = digitsOf(field(body, FIELDS.expiry), /^[\d /.-]{0,10}$/);
  if (!exp) errors.expiry = `${L.expiry}을 MM/YY 형식으로 입력해 주세요.`;
  else {
    const m = /^(\d{2})(?:20)?(\d{2})$/.exec(exp);
    const month = m ? Number(m[1]) : 0;
    if (!m || month < 1 || month > 12) errors.expiry = `${L.expiry}이 올바르지 않습니다. 카드 앞면의 MM/YY를 입력해 주세요.`;
    else {
      expiryMonth = m[1]!;
      expiryYear = m[2]!;
      const now = kstCompact(nowMs);
      const current = Number(now.slice(0, 4)) * 12 + Number(now.slice(4, 6));
      if ((2000 + Number(expiryYear)) * 12 + month < current) errors.expiry = `${L.expiry}이 지난 카드입니다. 다른 카드를 사용해 주세요.`;
    }
  }

  const holder = digitsOf(field(body, FIELDS.birth), /^[\d -]{0,14}$/);
  if (!holder) errors.birth = `${L.birth}를 입력해 주세요.`;
  else if (holder.length === 6) {
    const [yy, mm, dd] = [Number(holder.slice(0, 2)), Number(holder.slice(2, 4)), Number(holder.slice(4, 6))];
    if (!realDate(1900 + yy, mm, dd) && !realDate(2000 + yy, mm, dd)) errors.birth = `${L.birth}: 생년월일 6자리(YYMMDD)가 올바른 날짜가 아닙니다.`;
  } else if (holder.length !== 10) errors.birth = `${L.birth}: 생년월일 6자리 또는 사업자등록번호 10자리를 입력해 주세요.`;

  const password = field(body, FIELDS.cardPassword).trim();
  if (!/^\d{2}$/.test(password)) errors.cardPassword = `${L.cardPassword}를 숫자 2자리로 입력해 주세요.`;

  const rawInstallment = field(body, FIELDS.installment).trim() || LUMP_SUM;
  const problem = installmentProblem(rawInstallment, amount);
  const installment = problem === 'unknown' ? LUMP_SUM : rawInstallment;
  if (problem === 'unknown') errors.installment = `${L.installment}이 올바르지 않습니다. 목록에서 선택해 주세요.`;
  else if (problem === 'below-minimum') errors.installment = `${L.installment}: 할부는 50,000원 이상 결제할 때만 가능합니다. 일시불을 선택해 주세요.`;

  if (Object.keys(errors).length > 0 || !number) return { ok: false, errors, installment };
  return { ok: true, card: { number, expiryMonth, expiryYear, holderId: holder!, passwordDigits: password }, installment };
}
