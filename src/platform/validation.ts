import type { TSchema, Static } from '@sinclair/typebox';
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

const cache = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function checker<T extends TSchema>(schema: T): Checker<T> {
  let compiled = cache.get(schema) as TypeCheck<T> | undefined;
  if (!compiled) {
    compiled = TypeCompiler.Compile(schema);
    cache.set(schema, compiled);
  }
  const c = compiled;
  return {
    schema,
    check: (value): value is Static<T> => c.Check(value),
    firstError(value) {
      if (c.Check(value)) return null;
      const first = c.Errors(value).First();
      return first ? describe(first) : 'body: is invalid';
    },
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
  if (e.value === undefined) return `${field}: is required`;
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
