import { AppError } from '../platform/errors.js';
import { BAD_TEXT_REASON } from '../platform/validation.js';

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
