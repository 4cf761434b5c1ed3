import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SMTPServerSession } from 'smtp-server';
import { authFailures } from '../src/limits/auth-failures.ts';
import { clientKey } from '../src/limits/client-key.ts';
import { connectionLimit } from '../src/smtp/connection-limit.ts';

// One client, one budget: an IPv6 host commonly holds a whole /64, so the per-client limits (failed
// authentications, SMTP connections at once, the public request rate) count a /64 as one client.

const session = (id: string, remoteAddress: string) => ({ id, remoteAddress }) as SMTPServerSession;

/** Whether connectionLimit lets a session in. */
function connects(limit: ReturnType<typeof connectionLimit>, s: SMTPServerSession): string | undefined {
  let refused: string | undefined;
  limit.onConnect(s, (error) => (refused = error?.message));
  return refused;
}

describe('clientKey', () => {
  it('keeps IPv4 as it is, maps IPv4-mapped IPv6 to its IPv4 address, and keys other IPv6 by its /64', () => {
    const cases: [string, string][] = [
      ['203.0.113.7', '203.0.113.7'],
      ['::ffff:203.0.113.7', '203.0.113.7'],
      ['::ffff:cb00:7107', '203.0.113.7'],
      ['2001:db8:1:2::7', '2001:db8:1:2::/64'],
      ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
      ['2001:DB8:1:2:0:0:0:8', '2001:db8:1:2::/64'],
      ['2001:db8:1:3::7', '2001:db8:1:3::/64'],
      ['::1', '::/64'],
    ];
    for (const [address, key] of cases) assert.equal(clientKey(address), key, address);
  });
});

describe('per-client limits count an IPv6 /64 as one client', () => {
  it('failed authentications: two addresses of one /64 share a lockout; another /64 and IPv4 do not', () => {
    const failures = authFailures(3, () => 0);
    failures.add('2001:db8:1:2::7');
    failures.add('2001:db8:1:2::8');
    failures.add('2001:db8:1:2:abcd::1');
    assert.equal(failures.blocked('2001:db8:1:2::99'), true);
    assert.equal(failures.blocked('2001:db8:1:3::7'), false);
    assert.equal(failures.blocked('203.0.113.7'), false);

    failures.add('203.0.113.7');
    failures.add('::ffff:203.0.113.7');
    failures.add('203.0.113.7');
    assert.equal(failures.blocked('::ffff:203.0.113.7'), true, 'IPv4-mapped is the IPv4 address');
  });

  it('SMTP connections at once: a second address of the /64 is refused while the first is connected, and let in once it leaves', () => {
    const limit = connectionLimit(1);
    const first = session('a', '2001:db8:1:2::7');
    assert.equal(connects(limit, first), undefined);
    assert.equal(connects(limit, session('b', '2001:db8:1:2::8')), '4.7.0 Too many connections from 2001:db8:1:2::/64, try again later');
    assert.equal(connects(limit, session('c', '2001:db8:1:3::8')), undefined, 'another /64');
    limit.onClose(first);
    assert.equal(connects(limit, session('d', '2001:db8:1:2::8')), undefined);
  });
});
