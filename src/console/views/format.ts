import { html, type SafeHtml } from '../../pages/html.js';
import { kstIso } from '../../platform/kst.js';

/** How the console writes times and amounts (KST, like every time Sunap shows). */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  return kstIso(Number(ms)).replace('T', ' ').slice(0, 16);
}

export function whenSeconds(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  return kstIso(Number(ms)).replace('T', ' ');
}

export function num(n: number): string {
  return Number(n).toLocaleString('ko-KR');
}

/** 01012345678 → 010-1234-5678 (the console shows whole numbers: its users run the store). */
export function phone(p: string | null | undefined): string {
  if (!p) return '';
  const d = p.replace(/\D/g, '');
  if (d.length === 11) return `${d.slice(0, 3)}-${d.slice(3, 7)}-${d.slice(7)}`;
  if (d.length === 10) return d.startsWith('02') ? `${d.slice(0, 2)}-${d.slice(2, 6)}-${d.slice(6)}` : `${d.slice(0, 3)}-${d.slice(3, 6)}-${d.slice(6)}`;
  return p;
}

/** The channel a message went by, as a merchant says it (the API's codes stay in the API). */
export const CHANNEL_LABEL: Record<string, string> = { ALIMTALK: '알림톡', SMS: '문자(SMS)', LMS: '장문 문자(LMS)', MMS: '사진 문자(MMS)', ALIMTALK_THEN_SMS: '알림톡 (실패 시 문자)' };

/** A message's delivery report, in Korean. */
export const DELIVERY_LABEL: Record<string, string> = { ACCEPTED: '통신사 접수', DELIVERED: '받음', FAILED: '받지 못함', PENDING: '확인 중', UNKNOWN: '알 수 없음' };

/**
 * What went wrong in a sentence a merchant understands; the raw detail (an error code, an
 * address) stays behind "자세히" for whoever fixes it.
 */
export function problemWords(raw: string): string {
  if (/ECONNREFUSED/.test(raw)) return '받는 서버가 연결을 거부했습니다 (서버가 꺼져 있거나 주소·포트가 틀립니다)';
  if (/ETIMEDOUT|timed? ?out|timeout|aborted/i.test(raw)) return '받는 서버가 제때 답하지 않았습니다';
  if (/ENOTFOUND|EAI_AGAIN/.test(raw)) return '받는 서버의 주소를 찾을 수 없습니다';
  if (/ECONNRESET|socket hang up/i.test(raw)) return '받는 서버가 연결을 끊었습니다';
  if (/certificate|TLS|SSL|self[- ]signed/i.test(raw)) return '받는 서버의 보안 인증서에 문제가 있습니다';
  const http = /\bHTTP (\d{3})\b|\bstatus (\d{3})\b/i.exec(raw);
  if (http) return `받는 서버가 ${http[1] ?? http[2]} 오류로 답했습니다`;
  return '전달하지 못했습니다';
}

/**
 * A note the service stored in its own words (a points ledger memo, a schedule run's message),
 * as a merchant reads it: the known shapes in Korean, anything else as "메모" with the stored
 * text behind "자세히". Merchant-written memos (a grant's, a recharge's) are Korean already and
 * pass through unchanged. The stored text stays as it is: the API returns it.
 */
export function noteWords(raw: string | null | undefined): { words: string; detail: string | null } {
  if (!raw) return { words: '', detail: null };
  if (raw === 'INITIAL') return { words: '발송', detail: null };
  if (raw === 'RESEND') return { words: '재발송', detail: null };
  const carried = /^(\w+) carried it$/.exec(raw);
  if (carried) return { words: `남은 포인트 환급 (전달: ${CHANNEL_LABEL[carried[1]!] ?? carried[1]!})`, detail: null };
  if (raw === 'send failed') return { words: '발송 실패로 포인트 환급', detail: null };
  if (raw === 'not delivered on any channel') return { words: '어느 채널로도 전달되지 않아 포인트 환급', detail: null };
  const billed = /^billed (\d+)(?:; left out \(no amount\): (.*))?$/.exec(raw);
  if (billed) return { words: `${Number(billed[1]).toLocaleString('ko-KR')}건 청구${billed[2] ? ` · 금액이 없어 뺀 회원: ${billed[2].replace(/ and (\d+) more$/, ' 외 $1명')}` : ''}`, detail: null };
  if (raw.startsWith('no member has an amount')) return { words: '금액이 정해진 회원이 없고 템플릿에도 금액이 없어 보내지 않았습니다', detail: raw };
  if (raw.startsWith('waiting for points')) return { words: '발송 포인트가 모자라 충전을 기다립니다', detail: raw };
  if (/[가-힣]/.test(raw)) return { words: raw, detail: null };
  return { words: '메모', detail: raw };
}

/** `noteWords` on a page: the words, and the stored text behind "자세히" when there is one. */
export function note(raw: string | null | undefined): SafeHtml {
  const n = noteWords(raw);
  return n.detail ? html`${n.words} <details><summary>자세히</summary><code>${n.detail}</code></details>` : html`${n.words}`;
}
