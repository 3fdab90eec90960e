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
