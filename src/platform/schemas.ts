import { Type, type TSchema } from '@sinclair/typebox';

/** TypeBox shapes every surface shares, so the OpenAPI document reads the same everywhere. */

/** A value or null. */
export const Nullable = <T extends TSchema>(t: T, opts: { description?: string } = {}) => Type.Union([t, Type.Null()], opts);

/** The invoicing envelope: `result_code` 0 on success, the data in `result_data`. */
export const Envelope = <T extends TSchema>(data: T) => Type.Object({
  result_code: Type.Integer({ description: '0 on success; a negative code on failure (docs/reference.md, "Invoicing: authentication and result_code values")' }),
  result_msg: Type.String(),
  result_data: data,
});

/** An invoicing error answer: `result_data` is null and `result_msg` reads `field: reason`. */
export const ErrorEnvelope = Type.Object({
  result_code: Type.Integer({ description: 'A negative code (docs/reference.md, "Invoicing: authentication and result_code values")', examples: [-20] }),
  result_msg: Type.String({ examples: ['members[0].studentPhone: must be 10 to 11 digits'] }),
  result_data: Type.Null(),
});
