/**
 * Who holds a payment attempt (src/platform/instance.ts): an owner is taken for gone only when
 * that is certain (a process of this host that no longer runs, or an earlier process with this
 * process's id); anything that may be alive is not.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { test } from 'node:test';
import { INSTANCE_ID, ownerGone, ownerHostPrefix } from '../../src/platform/instance.js';

const host = hostname();

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

test('this process is host/pid/random and never gone to itself', () => {
  assert.match(INSTANCE_ID, new RegExp(`^${host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${process.pid}/[0-9a-f]{12}$`));
  assert.equal(ownerGone(INSTANCE_ID), false);
  assert.equal(ownerHostPrefix(), `${host}/`);
});

test('an earlier process with this process id (a container restarted as pid 1) is gone', () => {
  assert.equal(ownerGone(`${host}/${process.pid}/000000000000`), true);
});

test('a process of this host that ended is gone; one that runs is not', async () => {
  assert.equal(ownerGone(`${host}/${await deadPid()}/abcdefabcdef`), true);
  const alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
  try {
    assert.equal(ownerGone(`${host}/${alive.pid}/abcdefabcdef`), false);
  } finally {
    alive.kill('SIGKILL');
  }
  assert.equal(ownerGone(`${host}/${process.ppid}/abcdefabcdef`), false, 'the parent runs');
});

test('another host, no owner or a malformed one: may be alive, never gone', async () => {
  const pid = await deadPid();
  assert.equal(ownerGone(`other-${host}/${pid}/abcdefabcdef`), false);
  assert.equal(ownerGone(null), false);
  for (const bad of ['', host, `${host}/x/abc`, `${host}/0/abc`, `${host}/-5/abc`]) assert.equal(ownerGone(bad), false, bad);
});
