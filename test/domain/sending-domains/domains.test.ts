import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { dialects, startApp, type TestApp } from '../../support/harness.ts';
import { createDomain, domainOf, HOSTNAME, type Domain } from '../../support/domain-setup.ts';

for (const dialect of dialects) {
  describe(`domains: create, get, list, update, delete (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_HOSTNAME: HOSTNAME } });
    });
    after(() => t.close());

    it('creates a domain with 201: SPF MX and TXT on the return path, DKIM with a fresh 2048-bit RSA key, DMARC', async () => {
      const response = await t.fetch('/domains', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Acme.Example.com', custom_return_path: 'bounces' }),
      });
      assert.equal(response.status, 201);
      const body = (await response.json()) as Domain & Record<string, unknown>;
      assert.equal(body.object, undefined, 'POST answers without `object`');
      assert.equal(body.name, 'acme.example.com');
      assert.equal(body.status, 'not_started');
      assert.equal(body.region, 'us-east-1');
      assert.deepEqual(body.capabilities, { sending: 'enabled', receiving: 'disabled' });
      assert.equal(body.open_tracking, false);
      assert.match(body.created_at as string, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\+00$/);

      const [mx, spf, dkim, dmarc] = body.records;
      assert.deepEqual(mx, { record: 'SPF', name: 'bounces', type: 'MX', ttl: 'Auto', status: 'not_started', value: HOSTNAME, priority: 10 });
      assert.deepEqual(spf, { record: 'SPF', name: 'bounces', type: 'TXT', ttl: 'Auto', status: 'not_started', value: `v=spf1 a:${HOSTNAME} ~all` });
      assert.equal(dkim!.record, 'DKIM');
      assert.equal(dkim!.name, 'mailroom._domainkey');
      assert.equal(dkim!.type, 'TXT');
      const key = createPublicKey({ key: Buffer.from(dkim!.value.replace(/^p=/, ''), 'base64'), format: 'der', type: 'spki' });
      assert.equal(key.asymmetricKeyType, 'rsa');
      assert.equal(key.asymmetricKeyDetails!.modulusLength, 2048);
      assert.deepEqual(dmarc, { record: 'DMARC', name: '_dmarc', type: 'TXT', ttl: 'Auto', status: 'not_started', value: 'v=DMARC1; p=none;' });

      const other = await createDomain(t, 'other.example.com');
      assert.notEqual(other.records[2]!.value, dkim!.value, 'every domain gets its own key');
      assert.equal(other.records[0]!.name, 'send', 'the return path defaults to "send"');
    });

    it('stores the DKIM private key sealed with MAILROOM_SECRET and never returns it', async () => {
      const created = await createDomain(t, 'sealed.example.com');
      const row = await t.ctx.db.selectFrom('domains').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      // A 2048-bit PKCS#8 key in base64 starts "MIIEu" to "MIIEw"; "MII" alone turns up in random sealed text.
      assert.doesNotMatch(row.dkim_private_key, /PRIVATE KEY|MIIE[uvw]/);
      assert.match(row.dkim_private_key, /^v1\./);
      const seen = JSON.stringify([created, await domainOf(t, created.id), (await t.resend.domains.list()).data]);
      assert.ok(!seen.includes(row.dkim_private_key));
      assert.doesNotMatch(seen, /PRIVATE|dkim_private_key/);
    });

    it('gets a domain with object "domain", lists them without records, everything unless limit is given', async () => {
      const created = await createDomain(t, 'listed.example.com');
      const got = (await domainOf(t, created.id)) as Domain & { object: string };
      assert.equal(got.object, 'domain');
      assert.deepEqual(got.records, created.records);

      const { data } = await t.resend.domains.list();
      assert.equal(data!.object, 'list');
      assert.equal(data!.has_more, false);
      const row = data!.data.find((d) => d.id === created.id)!;
      assert.deepEqual(Object.keys(row).sort(), ['capabilities', 'click_tracking', 'created_at', 'id', 'name', 'open_tracking', 'region', 'status']);
      assert.ok(data!.data.length >= 4);
      assert.equal(data!.data[0]!.id, created.id, 'newest first');
      const page = await t.resend.domains.list({ limit: 1 });
      assert.equal(page.data!.data.length, 1);
      assert.equal(page.data!.has_more, true);
    });

    it('updates tracking and tls, and deletes; an unknown domain is 404 "Domain not found"', async () => {
      const created = await createDomain(t, 'changing.example.com');
      const updated = await t.resend.domains.update({ id: created.id, openTracking: true, clickTracking: true, tls: 'enforced' });
      assert.deepEqual(updated.data, { object: 'domain', id: created.id });
      const got = (await domainOf(t, created.id)) as Domain & { tls: string; open_tracking: boolean; click_tracking: boolean };
      assert.equal(got.tls, 'enforced');
      assert.equal(got.open_tracking, true);
      assert.equal(got.click_tracking, true);

      assert.deepEqual((await t.resend.domains.remove(created.id)).data, { object: 'domain', id: created.id, deleted: true });
      for (const call of [() => t.resend.domains.get(created.id), () => t.resend.domains.remove(created.id), () => t.resend.domains.verify(created.id)]) {
        const { error } = await call();
        assert.deepEqual(error, { statusCode: 404, name: 'not_found', message: 'Domain not found' });
      }
    });

    it('refuses bad input in Resend’s words', async () => {
      const cases: [Record<string, unknown>, number, string, RegExp][] = [
        [{}, 422, 'missing_required_field', /Missing `name` field/],
        [{ name: 'not a domain' }, 422, 'validation_error', /`name`/],
        [{ name: 'r.example.com', region: 'mars-1' }, 422, 'invalid_region', /Region must be "us-east-1" \| "eu-west-1" \| "sa-east-1" \| "ap-northeast-1"/],
        [{ name: 'r.example.com', tls: 'sometimes' }, 422, 'validation_error', /`tls`/],
        [{ name: 'r.example.com', custom_return_path: 'a b' }, 422, 'validation_error', /`custom_return_path`/],
        [{ name: 'r.example.com', capabilities: { receiving: 'yes' } }, 422, 'validation_error', /^Invalid `capabilities.receiving` field: must be "enabled" or "disabled"\.$/],
        [{ name: 'r.example.com', capabilities: { sending: 'off' } }, 422, 'validation_error', /^Invalid `capabilities.sending` field/],
        [{ name: 'r.example.com', capabilities: { sending: 'disabled' } }, 422, 'validation_error', /At least one capability must be enabled/],
        [{ name: 'r.example.com', open_tracking: 'yes' }, 422, 'validation_error', /`open_tracking`/],
      ];
      for (const [body, status, name, message] of cases) {
        const response = await t.fetch('/domains', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const error = (await response.json()) as { statusCode: number; name: string; message: string };
        assert.equal(response.status, status, JSON.stringify(body));
        assert.equal(error.name, name, JSON.stringify(body));
        assert.match(error.message, message);
      }
      await createDomain(t, 'twice.example.com');
      const { error } = await t.resend.domains.create({ name: 'TWICE.example.com' });
      assert.equal(error?.statusCode, 403);
      assert.equal(error?.name, 'validation_error');
      assert.match(error.message, /twice\.example\.com domain has already been registered/);
      const { count } = (await t.ctx.db.selectFrom('domains').select((eb) => eb.fn.countAll<number>().as('count')).where('name', '=', 'r.example.com').executeTakeFirstOrThrow());
      assert.equal(Number(count), 0);
    });

    it('is closed to sending_access keys', async () => {
      const { data } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      const sender = new Resend(data!.token, { baseUrl: t.url });
      assert.equal((await sender.domains.list()).error?.name, 'restricted_api_key');
      assert.equal((await sender.domains.create({ name: 'x.example.com' })).error?.statusCode, 401);
    });
  });
}
