import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closest } from '../src/cli/suggest.js';
import { runSunap } from './helpers/cli.js';

test('"did you mean": the closest command or option within two edits (one for short words), nothing when none is that close', () => {
  assert.equal(closest('serv', ['serve', 'migrate']), 'serve');
  assert.equal(closest('acount', ['account', 'platform']), 'account');
  assert.equal(closest('resetpassword', ['reset-password', 'create']), 'reset-password');
  assert.equal(closest('emial', ['email', 'password']), 'email');
  // Two edits on a 6-letter word: allowed; three: not.
  assert.equal(closest('plaform', ['platform']), 'platform');
  assert.equal(closest('pltfrm', ['platform']), 'platform');
  assert.equal(closest('ptfm', ['platform']), undefined);
  // A short word allows one edit only; an exact word suggests nothing.
  assert.equal(closest('xy', ['x']), 'x');
  assert.equal(closest('xyz', ['x']), undefined);
  assert.equal(closest('serve', ['serve']), undefined);
  assert.equal(closest('nonsense', ['serve', 'migrate', 'account']), undefined);
});

test('the CLI says it on one line, exit 64', async () => {
  for (const [args, said] of [
    [['acount', 'create'], 'unknown command "acount" (did you mean "account"?)'],
    [['account', 'resetpassword'], 'unknown command "account resetpassword" (did you mean "account reset-password"?)'],
    [['account', 'reset-password', '--emial', 'a@example.com'], 'unknown option --emial (did you mean "--email"?)'],
  ] as const) {
    const r = await runSunap([...args], { DATABASE_URL: 'sqlite::memory:' });
    assert.equal(r.code, 64, r.stderr);
    assert.ok(r.stderr.includes(said), r.stderr);
    assert.equal(r.stdout, '');
  }
});
