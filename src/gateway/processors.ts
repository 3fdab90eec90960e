import type { Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import type { SecretBox } from '../platform/crypto.js';
import type { CardProcessor } from '../ports/card-processor.js';
import {
  DEFAULT_METHODS, isKeyInProcessor, type CheckoutProcessor, type CheckoutProcessorId, type KeyInProcessorId, type PayMethod, type PayWay, type ProcessorId,
  type ProcessorKeys,
} from '../ports/checkout.js';
import type { Payment } from './repository.js';
import * as settingsRepo from './settings-repository.js';

/**
 * The processor registry (docs/architecture.md, "The checkout port"): which processor and way a
 * store takes payments with (its own settings, else the operator's configuration), the adapter
 * for a processor with the store's keys (else the operator's), and the adapter of a payment by
 * what the payment recorded, whatever the settings say now.
 *
 * Adapters come from factories the composition root (src/app.ts) hands in, one per processor id;
 * a processor without a factory is "not available" (ProcessorUnavailable), never a crash.
 */
/** `scope.storeCode`: the store whose own keys these are; null for the operator's (PortOne names its notice address by it). */
export type FactoryScope = { storeCode: string | null };
export type CheckoutFactory = (keys: ProcessorKeys, scope?: FactoryScope) => CheckoutProcessor;
export type KeyInFactory = (keys: ProcessorKeys, scope?: FactoryScope) => CardProcessor;
export type CheckoutFactories = { [K in CheckoutProcessorId]?: CheckoutFactory };
export type KeyInFactories = { [K in KeyInProcessorId]?: KeyInFactory };

export interface ProcessorSetup {
  /** The operator's processor and way (SUNAP_CARD_PROCESSOR), for stores without settings of their own. */
  global: { processor: CheckoutProcessorId; way: PayWay };
  /** The operator's keys per processor (SUNAP_TOSS_* ...): the fallback of a store without its own. */
  globalKeys: { [K in CheckoutProcessorId]?: ProcessorKeys };
  /** Live mode: the sandbox processors are never used. */
  live: boolean;
  checkout: CheckoutFactories;
  keyIn: KeyInFactories;
}

/** A processor that cannot be used now (no adapter in this build, no keys, the sandbox in live mode); `message` says why, for the operator. */
export class ProcessorUnavailable extends Error {
  override name = 'ProcessorUnavailable';
}

/** How a store takes payments. */
export interface StoreWay {
  processor: CheckoutProcessorId;
  way: PayWay;
  methods: PayMethod[];
  /** Its own settings, or the operator's configuration. */
  source: 'store' | 'operator';
}

export type PaymentProcessor = { kind: 'checkout'; id: CheckoutProcessorId; adapter: CheckoutProcessor } | { kind: 'key-in'; id: KeyInProcessorId; adapter: CardProcessor };

/** Adapters built at most this many times per (processor, store, keys): a settings change makes new ones. */
const CACHE_LIMIT = 500;

export class ProcessorRegistry {
  private readonly cache = new Map<string, CheckoutProcessor | CardProcessor>();

  constructor(private readonly db: Kysely<Database>, private readonly box: SecretBox, private readonly setup: ProcessorSetup) {}

  /** The store's processor, way and offered methods. */
  async storeWay(storeCode: string): Promise<StoreWay> {
    const row = await settingsRepo.storeProcessor(this.db, storeCode);
    if (row) return { processor: row.processor, way: row.way, methods: settingsRepo.parseMethods(row.methods), source: 'store' };
    return { processor: this.setup.global.processor, way: this.setup.global.way, methods: [...DEFAULT_METHODS], source: 'operator' };
  }

  /** The processor id a store's card payments go to: `toss` through the window, `toss-keyin` by card number. */
  static processorIdOf(w: Pick<StoreWay, 'processor' | 'way'>): ProcessorId {
    if (w.way === 'checkout') return w.processor;
    if (w.processor === 'portone') throw new ProcessorUnavailable('portone: takes payments through its window only (key-in is not offered)');
    return `${w.processor}-keyin`;
  }

  /** The checkout adapter of `id` with the store's keys. */
  async checkout(id: CheckoutProcessorId, storeCode: string): Promise<CheckoutProcessor> {
    return (await this.build(id, storeCode, this.setup.checkout[id])) as CheckoutProcessor;
  }

  /** The key-in adapter of `id` with the store's keys. */
  async keyIn(id: KeyInProcessorId, storeCode: string): Promise<CardProcessor> {
    return (await this.build(id, storeCode, this.setup.keyIn[id])) as CardProcessor;
  }

  /** The adapter a payment's cancel and look-ups go to: the processor it recorded. */
  async forPayment(p: Pick<Payment, 'processor' | 'store_code'>): Promise<PaymentProcessor> {
    // A payment without a record (approved before processors were recorded) is a key-in approval of the operator's processor.
    const id: ProcessorId = p.processor ?? (this.setup.global.processor === 'toss' ? 'toss-keyin' : 'sandbox-keyin');
    return this.byId(id, p.store_code);
  }

  async byId(id: ProcessorId, storeCode: string): Promise<PaymentProcessor> {
    if (isKeyInProcessor(id)) return { kind: 'key-in', id, adapter: await this.keyIn(id, storeCode) };
    return { kind: 'checkout', id, adapter: await this.checkout(id, storeCode) };
  }

  /** The operator's own adapters (no store's keys), for the reconcile's staleness and `sunap doctor`. */
  async operatorAdapters(): Promise<(CheckoutProcessor | CardProcessor)[]> {
    const out: (CheckoutProcessor | CardProcessor)[] = [];
    const id = ProcessorRegistry.processorIdOf(this.setup.global);
    try {
      out.push((await this.byId(id, '')).adapter);
    } catch {
      // Not available: nothing to measure.
    }
    return out;
  }

  private async build(id: ProcessorId, storeCode: string, factory: CheckoutFactory | KeyInFactory | undefined): Promise<CheckoutProcessor | CardProcessor> {
    const base: CheckoutProcessorId = isKeyInProcessor(id) ? (id.replace(/-keyin$/, '') as CheckoutProcessorId) : id;
    if (this.setup.live && base === 'sandbox') throw new ProcessorUnavailable(`${id}: the sandbox is not used in live mode; set the store's processor (sunap store set-processor)`);
    if (!factory) throw new ProcessorUnavailable(`${id}: this build has no adapter for it`);
    const own = storeCode ? await settingsRepo.storeKeys(this.db, storeCode, base) : undefined;
    const cacheKey = `${id}|${own ? storeCode : '*'}|${own?.updated_at ?? 0}`;
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    const keys = own ? settingsRepo.openKeys(this.box, own) : (this.setup.globalKeys[base] ?? {});
    const adapter = factory(keys, { storeCode: own ? storeCode : null });
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, adapter);
    return adapter;
  }
}
