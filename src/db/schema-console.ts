import type { Generated } from 'kysely';
// A type-only import of a file that imports nothing: the team's roles.
import type { AccountRole } from '../invoicing/invoice-state.js';

/** The console's tables (migrations 0007 and 0014), beside src/db/schema.ts. */

export interface ConsoleSessionTable {
  /** SHA-256 of the cookie's token. */
  id: string;
  account_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  revoked_at: number | null;
  ip: string;
  user_agent: string;
}

export interface ConsoleInviteTable {
  id: string;
  tenant_id: string;
  email: string;
  role: AccountRole;
  token_hash: string;
  invited_by: string;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  revoked_at: number | null;
}

/** A one-time link to choose a new password (0014): only the token's hash is kept. */
export interface ConsolePasswordResetTable {
  id: string;
  tenant_id: string;
  /** The member whose password it resets. */
  account_id: string;
  token_hash: string;
  /** Who made it: an owner's email, or `operator` (the CLI). */
  created_by: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  tenant_id: string;
  actor_id: string | null;
  actor_email: string;
  action: string;
  target: string | null;
  detail: string | null;
  ip: string;
  created_at: number;
}
