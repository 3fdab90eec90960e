/** How Sunap writes money for people (pages, messages): 128000 → "128,000원". */
export function won(n: number): string {
  return `${n.toLocaleString('ko-KR')}원`;
}

