import { AppError } from '../platform/errors.js';
import { BAD_TEXT_REASON, controlProblem } from '../platform/validation.js';
import { wholeNumber } from './forms.js';

/**
 * The console says a problem in Korean, beside its field; the API keeps its English
 * `field: reason` (decisions §4). A service refuses with the API's message, and this turns it
 * into the form field it is about and a Korean sentence. Forms collect every problem into one
 * `FieldErrors` and show them all at once, with the values as typed.
 */
export type FieldErrors = Record<string, string>;

/** The form field and the Korean name of each field the API names (members[0].studentPhone → phone, 전화번호). */
const FIELDS: [RegExp, string, string][] = [
  [/^reason$|^recipientItems\[\d+\]\.reason$/, 'reason', '청구 사유'],
  [/^description$|^recipientItems\[\d+\]\.description$/, 'description', '안내 문구'],
  [/^webhookUrl$/, 'webhookUrl', '웹훅 주소'],
  [/^webhookSecret$/, 'webhookUrl', '웹훅 서명 키'],
  [/^amount$|^recipientItems\[\d+\]\.amount$/, 'amount', '금액'],
  [/^members\[\d+\]\.studentName$|^recipientItems\[\d+\]\.studentName$/, 'name', '이름'],
  [/^members\[\d+\]\.studentPhone$|^recipientItems\[\d+\]\.studentPhone$/, 'phone', '전화번호'],
  [/^members\[\d+\]\.guardianPhone$/, 'guardianPhone', '보호자 전화번호'],
  [/^items|^recipientItems\[\d+\]\.items/, 'items', '청구 항목'],
  [/^billTemplateId$/, 'template', '템플릿'],
  [/^sendChannel$/, 'sendChannel', '발송 방법'],
  [/^requestId$/, 'requestId', '요청 번호'],
  [/^dueDate$/, 'dueDate', '납부 기한'],
  [/^taxFreeAmount$|^recipientItems\[\d+\]\.taxFreeAmount$/, 'taxFreeAmount', '면세 금액'],
  [/^members$|^recipientItems$/, 'csv', '받는 분'],
  [/^points$/, 'form', '포인트'],
  [/^name$/, 'name', '이름'],
  [/^memo$/, 'memo', '메모'],
  [/^dueDays$/, 'dueDays', '납부 기한(발송 후 며칠)'],
  [/^email$/, 'email', '이메일'],
  [/^role$/, 'role', '역할'],
  [/^url$/, 'url', '주소'],
  [/^events$/, 'events', '받을 이벤트'],
];

/** The Korean of the API's reasons (src/platform/validation.ts and the services' own). */
function reasonOf(reason: string, label: string): string {
  let m: RegExpExecArray | null;
  if (reason === 'is required' || reason === 'must not be empty' || reason.startsWith('is required')) return `${label}을(를) 적어 주세요.`;
  if ((m = /^must be at most (\d+) characters$/.exec(reason))) return `${label}은(는) ${Number(m[1]).toLocaleString('ko-KR')}자까지 적을 수 있습니다.`;
  if (reason === 'must be 10 to 11 digits') return `${label}는 10~11자리 숫자여야 합니다 (예: 010-1234-5678).`;
  if (/whole number of won from 100/.test(reason)) return `${label}은 100원 이상 2,147,483,647원 이하의 숫자여야 합니다.`;
  if (reason === 'must be a number, not a string' || reason === 'must be a whole number') return `${label}은(는) 숫자로 적어 주세요.`;
  if (/https/.test(reason) && /URL|https:\/\//.test(reason)) return `${label}는 https://로 시작하는 주소여야 합니다 (시험 모드에서는 http://localhost도 됩니다).`;
  if (reason === BAD_TEXT_REASON) return `${label}에 쓸 수 없는 글자(제어 문자)가 있습니다.`;
  if ((m = /^the net sum of the items \((\d+)\) must equal the amount \((\d+)\)$/.exec(reason))) {
    return `항목 합계(${Number(m[1]).toLocaleString('ko-KR')}원)가 금액(${Number(m[2]).toLocaleString('ko-KR')}원)과 다릅니다.`;
  }
  if ((m = /^must be at most the amount \((\d+)\)$/.exec(reason))) return `${label}은 청구 금액(${Number(m[1]).toLocaleString('ko-KR')}원)보다 클 수 없습니다.`;
  if (/^no template/.test(reason)) return '고른 템플릿이 없습니다. 템플릿 목록을 확인해 주세요.';
  if (/^may only be given together with webhookUrl/.test(reason)) return '웹훅 서명 키는 웹훅 주소와 함께만 쓸 수 있습니다.';
  if ((m = /^insufficient send points to send the invoice \(needs (\d+), balance (\d+)\)$/.exec(reason))) {
    return `발송 포인트가 부족합니다 (필요 ${Number(m[1]).toLocaleString('ko-KR')}P, 보유 ${Number(m[2]).toLocaleString('ko-KR')}P). 포인트를 충전해 주세요.`;
  }
  if ((m = /^must not be before today \((\d{4}-\d{2}-\d{2}), KST\)$/.exec(reason))) return `${label}은 오늘(${m[1]})이나 그 뒤여야 합니다.`;
  if ((m = /^must be at most (\d+) days after today/.exec(reason))) return `${label}은 오늘부터 ${m[1]}일 안이어야 합니다.`;
  if (reason === 'must be a date as yyyy-MM-dd') return `${label}은 날짜여야 합니다 (예: 2026-12-10).`;
  if (reason === 'must be an email address') return '이메일 주소 형식이 아닙니다 (예: teacher@example.com).';
  if (/^an account with .* already exists$/.test(reason)) return '이 이메일로 된 계정이 이미 있습니다. 다른 이메일을 적어 주세요.';
  if (/needs at least one owner/.test(reason)) return '팀에는 소유자가 한 명 이상 있어야 합니다. 다른 멤버를 먼저 소유자로 바꿔 주세요.';
  if (/first account holds its invoices and points/.test(reason)) return '팀의 첫 계정은 청구서와 포인트를 가지고 있어 팀에서 뺄 수 없습니다.';
  if ((m = /^a store has at most (\d+) endpoints$/.exec(reason))) return `엔드포인트는 상점마다 ${m[1]}개까지 등록할 수 있습니다. 쓰지 않는 것을 먼저 꺼 주세요.`;
  if (reason === 'choose at least one event') return '받을 이벤트를 하나 이상 골라 주세요.';
  if (/one recipient only/.test(reason)) return '한 명에게 보낼 때만 쓸 수 있습니다.';
  if (/different invoice cannot be sent with the same requestId/.test(reason)) return '이 양식은 이미 다른 내용으로 보냈습니다. 새 양식을 열어 주세요.';
  return `${label}이(가) 올바르지 않습니다.`;
}

/** The field and Korean sentence of an API message `path: reason` (a message without a path goes to `form`). */
export function koreanProblem(message: string): { field: string; message: string; path: string } {
  const i = message.indexOf(': ');
  const path = i > 0 ? message.slice(0, i) : '';
  const reason = i > 0 ? message.slice(i + 2) : message;
  const hit = FIELDS.find(([re]) => re.test(path));
  if (!hit) return { field: 'form', message: reasonOf(reason, '입력한 값'), path };
  return { field: hit[1], message: reasonOf(reason, hit[2]), path };
}

/** A refusal a form shows (a 4xx AppError other than not-found) as field errors; anything else is rethrown. */
export function fieldErrorsOf(err: unknown): FieldErrors {
  if (err instanceof AppError && err.httpStatus < 500 && err.kind !== 'NOT_FOUND') {
    const p = koreanProblem(err.message);
    return { [p.field]: p.message };
  }
  throw err;
}

/** The field errors one after another, for the alert at a form's top. */
export function summaryOf(errors: FieldErrors): string[] {
  return Object.values(errors);
}

/**
 * The particle after a Korean word: 은/는, 이/가, 을/를, 과/와 by whether its last syllable ends
 * in a consonant (청구 사유는, 이름은), a closing remark in brackets aside. A word not ending in Hangul gets both (URL은(는)).
 */
export function josa(word: string, pair: '은/는' | '이/가' | '을/를' | '과/와'): string {
  const [withFinal, without] = pair.split('/') as [string, string];
  // A label's closing remark does not change the particle: 납부 기한(발송 후 며칠)은, as 납부 기한은.
  const bare = word.replace(/\s*\([^)]*\)$/, '');
  const code = bare.charCodeAt(bare.length - 1);
  if (code < 0xac00 || code > 0xd7a3) return `${word}${withFinal}(${without})`;
  return `${word}${(code - 0xac00) % 28 === 0 ? without : withFinal}`;
}

/** How a text field of a form is checked (its limits are the API's, said in Korean). */
export interface TextRule {
  /** The field's Korean name, as its label says it. */
  label: string;
  /** At most this many characters (as typed, after trimming). */
  max: number;
  /** At least this many (a password's 8). */
  min?: number;
  /** Must not be empty; a string is the sentence to say when it is. */
  required?: boolean | string;
  /** Display text (names, reasons) refuses control characters; `lines` allows line breaks; `secret` (passwords) checks none and is not trimmed. */
  text?: 'line' | 'lines' | 'secret';
}

/** The problem of one text as its rule says it, in Korean, or undefined. */
export function textProblem(raw: string | undefined, rule: TextRule): string | undefined {
  const value = rule.text === 'secret' ? raw ?? '' : (raw ?? '').trim();
  // Characters as people count them (and as the API's schemas do): a Hangul syllable or an emoji is one.
  const length = [...value].length;
  if (length === 0) {
    if (!rule.required) return undefined;
    return typeof rule.required === 'string' ? rule.required : `${josa(rule.label, '을/를')} 적어 주세요.`;
  }
  if (length > rule.max) return `${josa(rule.label, '은/는')} ${rule.max.toLocaleString('ko-KR')}자까지 적을 수 있습니다 (지금 ${length.toLocaleString('ko-KR')}자).`;
  if (rule.min !== undefined && length < rule.min) return `${josa(rule.label, '은/는')} ${rule.min}자 이상이어야 합니다 (지금 ${length}자).`;
  if (rule.text !== 'secret' && controlProblem(value, rule.text === 'lines' ? 'lines' : 'line')) {
    return rule.text === 'lines' ? `${rule.label}에는 줄바꿈 말고 다른 제어 문자(탭 등)를 쓸 수 없습니다.` : `${rule.label}에는 줄바꿈이나 탭 같은 제어 문자를 쓸 수 없습니다.`;
  }
  return undefined;
}

/** Every text field's problem at once, keyed by the form field. */
export function textProblems<K extends string>(values: Partial<Record<NoInfer<K>, string | undefined>>, rules: Record<K, TextRule>): FieldErrors {
  const e: FieldErrors = {};
  for (const k of Object.keys(rules) as K[]) {
    const p = textProblem(values[k], rules[k]);
    if (p) e[k] = p;
  }
  return e;
}

/** How a number field is checked: whole numbers as people type them (128,000원), from `min` to `max`. */
export interface NumberRule {
  label: string;
  min: number;
  max: number;
  /** 원, P, 일: said after the numbers. */
  unit: string;
  required?: boolean;
}

/** A number field read and checked: its value, or the Korean sentence of its problem (nothing for an empty optional field). */
export function numberField(raw: string | undefined, rule: NumberRule): { value?: number; error?: string } {
  if (!raw?.trim()) return rule.required ? { error: `${josa(rule.label, '을/를')} 적어 주세요.` } : {};
  const n = wholeNumber(raw);
  const range = `${rule.min.toLocaleString('ko-KR')}${rule.unit}에서 ${rule.max.toLocaleString('ko-KR')}${rule.unit} 사이`;
  if (n === undefined) return { error: `${josa(rule.label, '은/는')} 숫자로 적어 주세요 (${range}).` };
  if (n < rule.min || n > rule.max) return { error: `${josa(rule.label, '은/는')} ${range}여야 합니다.` };
  return { value: n };
}

/** A password as the accounts keep it (src/invoicing/accounts.ts): 8 to 200 characters, never trimmed. */
export const PASSWORD_RULE: TextRule = { label: '비밀번호', min: 8, max: 200, required: true, text: 'secret' };

/** An email as the accounts keep it: 254 characters at most, name@domain. */
export function emailProblemKo(raw: string | undefined): string | undefined {
  const p = textProblem(raw, { label: '이메일', max: 254, required: true });
  if (p) return p;
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw!.trim()) ? undefined : '이메일 주소 형식이 아닙니다 (예: teacher@example.com).';
}

/** A phone number as typed (010-1234-5678): 10 to 11 digits once the dashes and spaces go. */
export function phoneProblem(raw: string | undefined, label: string, required: boolean): string | undefined {
  const d = (raw ?? '').replace(/[\s-]/g, '');
  if (!d) return required ? `${josa(label, '을/를')} 적어 주세요.` : undefined;
  return /^\d{10,11}$/.test(d) ? undefined : `${josa(label, '은/는')} 10~11자리 숫자여야 합니다 (예: 010-1234-5678).`;
}

/** An amount in won, as the API takes it (100 to 2,147,483,647). */
export const AMOUNT_RULE: NumberRule = { label: '금액', min: 100, max: 2_147_483_647, unit: '원' };

/** Whether a form has anything to fix. */
export const hasErrors = (e: FieldErrors): boolean => Object.keys(e).length > 0;
