import type { Migration } from 'kysely';
import * as m0001 from './0001_gateway.js';
import * as m0002 from './0002_invoicing.js';
import * as m0003 from './0003_sandbox_card_network.js';
import * as m0004 from './0004_invoice_counts.js';
import * as m0006 from './0006_processor_ref.js';
import * as m0007 from './0007_console.js';
import * as m0008 from './0008_throttles.js';
import * as m0009 from './0009_deliveries.js';
import * as m0010 from './0010_checkout.js';
import * as m0012 from './0012_attempt_owner.js';
import * as m0013 from './0013_billing.js';
import * as m0014 from './0014_console_reset_search.js';
import * as m0017 from './0017_short_links.js';
import * as m0018 from './0018_send_batches_tax_free.js';
import * as m0019 from './0019_console_text_search.js';
import * as m0020 from './0020_console_name_last2_order.js';

/** Every migration, by name, in the order they apply. */
export const migrations: Record<string, Migration> = {
  '0001_gateway': m0001,
  '0002_invoicing': m0002,
  '0003_sandbox_card_network': m0003,
  '0004_invoice_counts': m0004,
  '0006_processor_ref': m0006,
  '0007_console': m0007,
  '0008_throttles': m0008,
  '0009_deliveries': m0009,
  '0010_checkout': m0010,
  '0012_attempt_owner': m0012,
  '0013_billing': m0013,
  '0014_console_reset_search': m0014,
  '0017_short_links': m0017,
  '0018_send_batches_tax_free': m0018,
  '0019_console_text_search': m0019,
  '0020_console_name_last2_order': m0020,
};
