import { Type, type Static } from '@sinclair/typebox';

/**
 * The reminder rule an invoice may carry (docs/reference.md, section 17, "Reminders"): a
 * reminder N days before the due date, then every M days after it, K at most. Imports only
 * TypeBox, so the request schemas and the schedules share it.
 */
export const REMINDER_LIMITS = { beforeDays: 30, afterDays: 30, times: 5 } as const;

export const ReminderRule = Type.Object({
  beforeDays: Type.Optional(Type.Integer({ minimum: 1, maximum: REMINDER_LIMITS.beforeDays, 'x-reason': `must be a whole number of days from 1 to ${REMINDER_LIMITS.beforeDays}`, description: 'A reminder N days before the due date' })),
  afterDays: Type.Optional(Type.Integer({ minimum: 1, maximum: REMINDER_LIMITS.afterDays, 'x-reason': `must be a whole number of days from 1 to ${REMINDER_LIMITS.afterDays}`, description: 'Then every M days after the due date' })),
  times: Type.Integer({ minimum: 1, maximum: REMINDER_LIMITS.times, 'x-reason': `must be a whole number from 1 to ${REMINDER_LIMITS.times}`, description: 'At most K reminders in all' }),
}, { examples: [{ beforeDays: 3, afterDays: 2, times: 2 }] });
export type ReminderRule = Static<typeof ReminderRule>;
