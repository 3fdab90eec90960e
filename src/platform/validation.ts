import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/value';

/**
 * Validation that names the field: one TypeBox schema drives the check, the TypeScript type
 * and the OpenAPI document; this turns its first error into `FIELD: reason`, with nested
 * paths written as `ITEMS[1].name`. A schema may carry `x-reason` to say what it expects in
 * words (used for patterns and formats).
 */
export interface Checker<T extends TSchema> {
  schema: T;
  /** Returns the first problem as `path: reason`, or null when the value is valid. */
  firstError(value: unknown): string | null;
  check(value: unknown): value is Static<T>;
}

/**
 * Text the service cannot keep as given: NUL (PostgreSQL refuses it in text, so it would fail
 * deep in a query as a 500, while SQLite would store it) and unpaired UTF-16 surrogates (not
 * text at all; drivers silently turn them into U+FFFD). Refused wherever a schema expects a string.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this pattern looks for.
const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const BAD_TEXT_REASON = 'must be text without NUL characters or unpaired surrogates';

/**
 * Display text (names, reasons, messages people read, on pages, in notifications and in the
 * console's CSV exports) holds no control characters: no C0 or C1 control, no DEL, no line or
 * paragraph separator. A line break in a name could start a line of its own wherever the name is
 * written out (the exports' formula injection). Multi-line text (descriptions, messages) keeps
 * its line breaks (\n, \r\n) and refuses the rest. A string schema says which it is with
 * `x-text`: `line` or `lines` (see DisplayText).
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what these patterns look for.
const CONTROL_LINE = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;
// eslint-disable-next-line no-control-regex -- as above; \n and \r are allowed here.
const CONTROL_LINES = /[\u0000-\u0009\u000B\u000C\u000E-\u001F\u007F-\u009F\u2028\u2029]/;
export const CONTROL_REASON = 'must not contain control characters (line breaks, tabs and the like)';
export const CONTROL_LINES_REASON = 'must not contain control characters other than line breaks';

/** The reason a display text is refused, or null: `lines` allows line breaks. */
export function controlProblem(value: string, kind: 'line' | 'lines' = 'line'): string | null {
  if (kind === 'lines') return CONTROL_LINES.test(value) ? CONTROL_LINES_REASON : null;
  return CONTROL_LINE.test(value) ? CONTROL_REASON : null;
}

/** A string schema of display text: `line` (names, reasons) or `lines` (descriptions, messages). */
export function DisplayText<O extends object>(opts: O, kind: 'line' | 'lines' = 'line') {
  return Type.String({ ...opts, 'x-text': kind });
}

/**
 * The first string under the schema's own properties (unknown fields are ignored, as their
 * values never reach storage) that is not acceptable text, as a field path; null when none.
 * Only called on a value that passed the schema, so the walk is as deep as the schema.
 */
function badTextPath(schema: TSchema, value: unknown, path: string): string | null {
  if (typeof value === 'string') {
    if (BAD_TEXT.test(value)) return `${path || 'body'}: ${BAD_TEXT_REASON}`;
    const kind = (schema as { 'x-text'?: 'line' | 'lines' })['x-text'];
    const problem = kind ? controlProblem(value, kind) : null;
    return problem ? `${path || 'body'}: ${problem}` : null;
  }
  if (value === null || typeof value !== 'object') return null;
  const s = schema as { anyOf?: TSchema[]; items?: TSchema; properties?: Record<string, TSchema> };
  if (s.anyOf) {
    for (const branch of s.anyOf) {
      const found = badTextPath(branch, value, path);
      if (found) return found;
    }
    return null;
  }
  if (Array.isArray(value)) {
    if (!s.items) return null;
    for (const [i, v] of value.entries()) {
      const found = badTextPath(s.items, v, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  for (const [k, sub] of Object.entries(s.properties ?? {})) {
    if (!Object.hasOwn(value, k)) continue;
    const found = badTextPath(sub, (value as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
    if (found) return found;
  }
  return null;
}

const cache = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function checker<T extends TSchema>(schema: T): Checker<T> {
  let compiled = cache.get(schema) as TypeCheck<T> | undefined;
  if (!compiled) {
    compiled = TypeCompiler.Compile(schema);
    cache.set(schema, compiled);
  }
  const c = compiled;
  const firstError = (value: unknown): string | null => {
    if (c.Check(value)) {
      return badTextPath(schema, value, '');
    }
    const first = c.Errors(value).First();
    return first ? describe(first) : 'body: is invalid';
  };
  return {
    schema,
    check: (value): value is Static<T> => firstError(value) === null,
    firstError,
  };
}

export function fieldPath(pointer: string): string {
  if (!pointer) return 'body';
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out || 'body';
}

function typeName(schema: TSchema): string {
  const t = (schema as { type?: string }).type;
  switch (t) {
    case 'string': return 'a string';
    case 'integer': return 'a whole number';
    case 'number': return 'a number';
    case 'boolean': return 'true or false';
    case 'array': return 'an array';
    case 'object': return 'an object';
    default: return 'a valid value';
  }
}

function describe(e: ValueError): string {
  const field = fieldPath(e.path);
  const s = e.schema as TSchema & Record<string, unknown>;
  const custom = s['x-reason'] as string | undefined;
  // A body of no bytes reaches validation as null: it is missing, as a null field is absent.
  if (e.value === undefined || (e.value === null && e.path === '')) return `${field}: is required`;
  // The commonest first mistakes, said as such: "100" where a number goes, 100 where a string goes.
  if ((e.type === ValueErrorType.Integer || e.type === ValueErrorType.Number) && typeof e.value === 'string') return `${field}: must be a number, not a string`;
  if (e.type === ValueErrorType.String && typeof e.value === 'number') return `${field}: must be a string, not a number`;
  switch (e.type) {
    case ValueErrorType.String:
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
    case ValueErrorType.Boolean:
    case ValueErrorType.Array:
    case ValueErrorType.Object:
      return `${field}: must be ${typeName(s)}`;
    case ValueErrorType.StringMaxLength:
      return `${field}: must be at most ${s.maxLength} characters`;
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? `${field}: must not be empty` : `${field}: must be at least ${s.minLength} characters`;
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
      return `${field}: ${custom ?? `must match ${s.pattern ?? s.format}`}`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `${field}: ${custom ?? `must be at least ${s.minimum}`}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `${field}: ${custom ?? `must be at most ${s.maximum}`}`;
    case ValueErrorType.ArrayMinItems:
      return `${field}: must have at least ${s.minItems} ${s.minItems === 1 ? 'entry' : 'entries'}`;
    case ValueErrorType.ArrayMaxItems:
      return `${field}: must have at most ${s.maxItems} entries`;
    case ValueErrorType.Union: {
      const options = ((s.anyOf as TSchema[] | undefined) ?? []).map((o) => (o as { const?: unknown }).const).filter((v) => v !== undefined);
      return options.length ? `${field}: must be one of ${options.join(', ')}` : `${field}: ${custom ?? 'has an unsupported value'}`;
    }
    case ValueErrorType.Literal:
      return `${field}: must be ${String((s as { const?: unknown }).const)}`;
    case ValueErrorType.ObjectAdditionalProperties:
      return `${field}: is not a known field`;
    default:
      return `${field}: ${custom ?? e.message}`;
  }
}

/** Optional fields accept null as absent (SDK-style payloads): drop null members of objects. */
export function dropNulls(value: unknown, depth = 0): unknown {
  if (depth > 32) return value;
  if (Array.isArray(value)) return value.map((v) => (v !== null && typeof v === 'object' ? dropNulls(v, depth + 1) : v));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === null) continue;
      out[k] = typeof v === 'object' ? dropNulls(v, depth + 1) : v;
    }
    return out;
  }
  return value;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
