import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPrivateLiteral, isPublicAddress } from '../src/net-guard.ts';

// The guard of outbound connections to addresses a user gave (remote attachments, webhook endpoints).

describe('isPublicAddress', () => {
  it('takes public unicast addresses, IPv4 and IPv6', () => {
    for (const ip of ['8.8.8.8', '203.0.114.1', '2606:4700::1111', '::ffff:8.8.8.8', '::808:808']) assert.equal(isPublicAddress(ip), true, ip);
  });

  it('refuses loopback, private, link-local, unspecified and reserved addresses, IPv4 embedded in IPv6 (mapped or IPv4-compatible) included', () => {
    for (const ip of [
      '127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::7f00:1',
      '::127.0.0.1',
      '::a00:1',
      '::a9fe:a9fe',
      '::2',
    ]) {
      assert.equal(isPublicAddress(ip), false, ip);
    }
  });

  it('reads URL hosts: a bracketed IPv4-compatible literal is private, a name is left to the lookup', () => {
    assert.equal(isPrivateLiteral(new URL('http://[::127.0.0.1]/hook')), true);
    assert.equal(isPrivateLiteral(new URL('http://[::7f00:1]:8080/hook')), true);
    assert.equal(isPrivateLiteral(new URL('http://[::808:808]/hook')), false);
    assert.equal(isPrivateLiteral(new URL('http://example.com/hook')), false);
  });
});
