/**
 * Where `value` occurs as a whole value in `text`: with no letter or digit on either side. A
 * leak check for short values (a six-digit birth date or expiry) must look for whole values,
 * since those digits turn up by chance inside timestamps, response times and approval numbers.
 */
export function findWhole(text: string, value: string): RegExpExecArray | null {
  return new RegExp(`(?<![A-Za-z0-9])${value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?![A-Za-z0-9])`).exec(text);
}
