/**
 * Korean Standard Time, the one time zone of every time Sunap shows (docs/reference.md,
 * "Conventions"). Times are kept as epoch milliseconds and formatted here only.
 */
const KST_OFFSET_MS = 9 * 3600 * 1000;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function kstParts(ms: number) {
  const d = new Date(ms + KST_OFFSET_MS);
  return {
    y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(),
    h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds(),
  };
}

/** yyyyMMddHHmmss in KST: the gateway's time format. */
export function kstCompact(ms: number): string {
  const p = kstParts(ms);
  return `${p.y}${pad(p.mo)}${pad(p.d)}${pad(p.h)}${pad(p.mi)}${pad(p.s)}`;
}

/** yyyy-MM-dd'T'HH:mm:ss in KST: the invoicing server's time format. */
export function kstIso(ms: number): string {
  const p = kstParts(ms);
  return `${p.y}-${pad(p.mo)}-${pad(p.d)}T${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}`;
}

/** yyyy-MM-dd'T'HH:mm:ss in KST, or null when there is no time (not paid yet, not cancelled). */
export function kstIsoOrNull(ms: number | null): string | null {
  return ms === null ? null : kstIso(ms);
}

/** yyyy-MM-dd HH:mm:ss in KST (payment.paymentDateTime). */
export function kstSpaced(ms: number): string {
  return kstIso(ms).replace('T', ' ');
}

/** yyyy-MM of a moment, in KST. */
export function kstMonth(ms: number): string {
  const p = kstParts(ms);
  return `${p.y}-${pad(p.mo)}`;
}

/** Start (inclusive) and end (exclusive) of a KST month, as epoch milliseconds. */
export function kstMonthRange(month: string): [number, number] {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const start = Date.UTC(y, m - 1, 1) - KST_OFFSET_MS;
  const end = Date.UTC(y, m, 1) - KST_OFFSET_MS;
  return [start, end];
}

/** Parses yyyyMMddHHmmss (KST) to epoch milliseconds; null when it is not a real moment. */
export function parseKstCompact(s: string): number | null {
  // Digit by digit rather than a regex with six groups: every signed gateway call parses one.
  if (s.length !== 14) return null;
  const at = (i: number, w: number) => {
    let v = 0;
    for (let k = i; k < i + w; k++) {
      const c = s.charCodeAt(k) - 48;
      if (c < 0 || c > 9) return -1;
      v = v * 10 + c;
    }
    return v;
  };
  const y = at(0, 4), mo = at(4, 2), d = at(6, 2), h = at(8, 2), mi = at(10, 2), se = at(12, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || se < 0) return null;
  const n = Date.UTC(y, mo - 1, d, h, mi, se);
  const back = new Date(n);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || se > 59) return null;
  return n - KST_OFFSET_MS;
}


/** yyyy-MM-dd of a moment, in KST (a due date, "today"). */
export function kstDate(ms: number): string {
  return kstIso(ms).slice(0, 10);
}

/** Whether a string is a real yyyy-MM-dd date (2026-02-30 is not). */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const back = new Date(Date.UTC(y, mo - 1, d));
  return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d;
}

/** Midnight KST that starts a yyyy-MM-dd day, as epoch milliseconds. */
export function kstDayStart(date: string): number {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  return Date.UTC(y, mo - 1, d) - KST_OFFSET_MS;
}

/** A yyyy-MM-dd date moved by whole days (negative: earlier). */
export function addDays(date: string, days: number): string {
  return kstDate(kstDayStart(date) + days * 86_400_000);
}
