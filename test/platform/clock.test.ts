/**
 * The shared sandbox clock (src/platform/clock.ts): a refresh whose read is overtaken by this
 * instance's own advance or reset never moves the clock back to the older offset. Seen under
 * load before the fix: a console session touched with the stale time expired 11 hours early.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { ServiceClock } from '../../src/platform/clock.js';
import { forEachEngine } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

/** Holds the result of the next plain SELECT (a refresh's read) until `release` is called. */
function holdNextRead() {
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  let armed = true;
  let reading = false;
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (armed && args.node.kind === 'SelectQueryNode') {
        armed = false;
        reading = true;
      }
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (reading) {
        reading = false;
        await released;
      }
      return args.result;
    },
  };
  return { plugin, release };
}

forEachEngine('the shared sandbox clock', (engine) => {
  let drop: () => Promise<void>;
  let store: DatabaseHandle;
  before(async () => {
    let url: string;
    ({ url, drop } = await createTestDatabase(engine));
    store = openDatabase(url);
    await migrate(store.db);
  });
  after(async () => {
    await store?.close();
    await drop?.();
  });

  test('a refresh overtaken by an advance keeps the advanced offset; one not overtaken reads the shared value', async () => {
    const hold = holdNextRead();
    const reader = new ServiceClock(store.db.withPlugin(hold.plugin));
    const other = new ServiceClock(store.db);
    await other.reset();
    const refreshing = reader.refresh();
    // The read has its value (0) and waits; this instance advances meanwhile, and only then does
    // the read come back.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await reader.advance(7200), 7200);
    hold.release();
    assert.equal(await refreshing, 7200);
    assert.equal(reader.offset(), 7200, 'not moved back by the older read');
    // Not overtaken: a refresh picks up another instance's advance, and its reset.
    assert.equal(await other.advance(60), 7260);
    assert.equal(await reader.refresh(), 7260);
    await other.reset();
    assert.equal(await reader.refresh(), 0, 'a reset elsewhere is read too');
  });
});
