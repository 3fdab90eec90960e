import { parseArgs } from 'node:util';
import { didYouMean } from './suggest.js';

/**
 * The one option parser of every `sunap` command. node:util parseArgs tokenizes (non-strict, so
 * that every problem gets a message of ours in the `--option: reason` form the domain errors use,
 * instead of Node's multi-line ones); the rules of the command line are checked here.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface OptionSpec {
  type: 'string' | 'boolean' | 'integer';
  description: string;
  required?: boolean;
  /** Placeholder of the value in usage lines and help (`--name NAME`). */
  value?: string;
  /** integer options: inclusive bounds; outside them is a usage error, like any malformed value. */
  min?: number;
  max?: number;
  default?: number;
  /** string options: the only values taken; another is a usage error that names the nearest one. */
  choices?: readonly string[];
}
export type Options = Record<string, OptionSpec>;

type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean'
  ? boolean
  : (S['type'] extends 'integer' ? number : string) | (S['required'] extends true ? never : S extends { default: number } ? never : undefined);
export type Values<O extends Options> = { -readonly [K in keyof O]: ValueOf<O[K]> };

/** Options every command takes besides its own. */
export const COMMON = {
  json: { type: 'boolean', description: 'print one JSON object on stdout (and nothing else) instead of key: value lines' },
  help: { type: 'boolean', description: 'print this help and do nothing else' },
} as const satisfies Options;

/** `--help` or `-h` anywhere before `--` wins over everything else on the line, even a malformed one. */
export function wantsHelp(args: string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

export function parseOptions<O extends Options>(options: O, args: string[]): { values: Values<O>; json: boolean } {
  const known: Record<string, { type: 'string' | 'boolean' }> = { json: { type: 'boolean' } };
  for (const [name, o] of Object.entries(options)) known[name] = { type: o.type === 'boolean' ? 'boolean' : 'string' };
  const { tokens } = parseArgs({ args, options: known, strict: false, allowPositionals: true, tokens: true });

  const raw: Record<string, string | boolean> = {};
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') throw new UsageError(`unexpected argument "${t.value}"`);
    const spec = t.name === 'json' ? COMMON.json : Object.hasOwn(options, t.name) ? options[t.name]! : undefined;
    if (!spec) throw new UsageError(`unknown option ${t.rawName}${t.rawName.startsWith('--') ? didYouMean(t.name, [...Object.keys(options), 'json'], (w) => `--${w}`) : ''}`);
    const flag = `--${t.name}`;
    if (t.name in raw) throw new UsageError(`${flag}: given more than once`);
    if (spec.type === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`${flag}: takes no value`);
      raw[t.name] = true;
      continue;
    }
    if (t.value === undefined) throw new UsageError(`${flag}: needs a value`);
    // parseArgs takes the next argument whatever it is; "--name --json" is a forgotten value.
    if (!t.inlineValue && t.value.startsWith('-')) {
      throw new UsageError(`${flag}: needs a value, got the option-like "${t.value}" (write ${flag}=${t.value} if that is the value)`);
    }
    raw[t.name] = t.value;
  }

  const values: Record<string, string | number | boolean | undefined> = {};
  for (const [name, o] of Object.entries(options)) {
    const v = raw[name];
    if (o.type === 'boolean') values[name] = v === true;
    else if (o.required && (v === undefined || v === '')) throw new UsageError(`--${name}: is required`);
    else if (v === undefined) values[name] = o.default;
    else values[name] = o.type === 'integer' ? integer(name, o, v as string) : o.choices ? choice(name, o.choices, v as string) : v;
  }
  return { values: values as Values<O>, json: raw.json === true };
}

function choice(name: string, choices: readonly string[], v: string): string {
  if (choices.includes(v)) return v;
  const near = nearest(choices, v);
  throw new UsageError(`--${name}: must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}, got "${v}"${near ? ` (did you mean ${near}?)` : ''}`);
}

/** The choice a typo most likely meant: the same in another case, or at most two edits away (Levenshtein). */
export function nearest(choices: readonly string[], v: string): string | undefined {
  const lower = v.toLowerCase();
  const same = choices.find((c) => c.toLowerCase() === lower);
  if (same) return same;
  let best: { c: string; d: number } | undefined;
  for (const c of choices) {
    const d = editDistance(c, lower);
    if (d <= 2 && (!best || d < best.d)) best = { c, d };
  }
  return best?.c;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

function integer(name: string, o: OptionSpec, v: string): number {
  const min = o.min ?? 0;
  const max = o.max ?? Number.MAX_SAFE_INTEGER;
  const n = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${name}: must be a whole number from ${min} to ${max}, got "${v}"`);
  return n;
}

/** `--name NAME`, `[--tel TEL]`, ..., `[--json]`: required options first, in declaration order otherwise. */
export function synopsis(options: Options): string[] {
  const parts = Object.entries(options).map(([name, o]) => {
    const s = o.type === 'boolean' ? `--${name}` : `--${name} ${o.value ?? 'VALUE'}`;
    return { s: o.required ? s : `[${s}]`, required: !!o.required };
  });
  return [...parts.filter((p) => p.required), ...parts.filter((p) => !p.required), { s: '[--json]' }].map((p) => p.s);
}
