import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { describe, it } from 'node:test';
import { cachedResolve } from '../../../src/domain/receiving/dns-cache.ts';

/** A resolver whose answers the test decides, counting the lookups that reach it. */
function countingResolver(answer: (name: string) => Promise<unknown>) {
  const resolver = { lookups: 0, resolve: (name: string) => (resolver.lookups++, answer(name)) };
  return resolver;
}

const absent = () => Promise.reject(Object.assign(new Error('queryTxt ENOTFOUND'), { code: 'ENOTFOUND' }));
const timedOut = () => Promise.reject(Object.assign(new Error('queryTxt ETIMEOUT'), { code: 'ETIMEOUT' }));

describe('the DNS cache of received mail authentication', () => {
  it('reuses an answer for a minute, an absent name too, but not a failure to get one', async () => {
    let now = 0;
    const answers = countingResolver(async () => [['v=spf1 -all']]);
    const resolve = cachedResolve(answers as unknown as Resolver, () => now);
    assert.deepEqual(await resolve('Sender.test', 'TXT'), [['v=spf1 -all']]);
    await resolve('sender.test', 'TXT');
    assert.equal(answers.lookups, 1, 'names compare case-insensitively');
    await resolve('sender.test', 'MX');
    assert.equal(answers.lookups, 2, 'each type is its own answer');
    now += 60_001;
    await resolve('sender.test', 'TXT');
    assert.equal(answers.lookups, 3, 'a minute later, asked again');

    const none = countingResolver(absent);
    const resolveNone = cachedResolve(none as unknown as Resolver, () => now);
    for (let i = 0; i < 2; i++) await assert.rejects(resolveNone('gone.test', 'TXT'), { code: 'ENOTFOUND' });
    assert.equal(none.lookups, 1);

    const failing = countingResolver(timedOut);
    const resolveFailing = cachedResolve(failing as unknown as Resolver, () => now);
    await assert.rejects(resolveFailing('slow.test', 'TXT'), { code: 'ETIMEOUT' });
    await new Promise((settled) => setImmediate(settled));
    await assert.rejects(resolveFailing('slow.test', 'TXT'), { code: 'ETIMEOUT' });
    assert.equal(failing.lookups, 2);
  });
});
