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
