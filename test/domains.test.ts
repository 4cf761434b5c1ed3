import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { dialects, eventually, startApp, type TestApp } from './harness.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from './dns-server.ts';

const HOSTNAME = 'mail.mailroom.test';
const HOUR = 3600_000;

type Domain = { id: string; name: string; status: string; records: { record: string; name: string; type: string; status: string; value: string; priority?: number }[] };

async function domainOf(t: TestApp, id: string): Promise<Domain> {
  const { data, error } = await t.resend.domains.get(id);
  assert.equal(error, null);
  return data as unknown as Domain;
}

async function statusBecomes(t: TestApp, id: string, status: string): Promise<Domain> {
  return eventually(async () => {
    const domain = await domainOf(t, id);
    return domain.status === status && domain;
  });
}

/** Waits until the verify job has looked the records up `checks` times since it was (re)created. */
async function checked(t: TestApp, id: string, checks = 1): Promise<void> {
  await eventually(async () => {
    const job = await t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', `verify-domain:${id}`).executeTakeFirst();
    return (!job || (job.attempts >= checks && job.locked_at === null)) || undefined;
  });
}

async function createDomain(t: TestApp, name: string): Promise<Domain> {
  const { data, error } = await t.resend.domains.create({ name });
  assert.equal(error, null);
  return data as unknown as Domain;
}

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
      assert.doesNotMatch(row.dkim_private_key, /PRIVATE KEY|MII/);
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
        [{ name: 'r.example.com', capabilities: { receiving: 'enabled' } }, 422, 'validation_error', /receiv/],
        [{ name: 'r.example.com', capabilities: { sending: 'disabled' } }, 422, 'validation_error', /At least one capability/],
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
      assert.match(error!.message, /twice\.example\.com domain has already been registered/);
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

  describe(`domain verification (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, { env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME } });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('POST /domains/:id/verify answers at once; the job finds records as they appear: pending, partially_verified, verified', async () => {
      const domain = await createDomain(t, 'progress.test');
      assert.deepEqual((await t.resend.domains.verify(domain.id)).data, { object: 'domain', id: domain.id });
      await checked(t, domain.id);
      let got = await domainOf(t, domain.id);
      assert.equal(got.status, 'pending');
      assert.deepEqual(got.records.map((r) => r.status), ['pending', 'pending', 'pending', 'pending']);

      publishRecords(dns, domain, ['DKIM']);
      t.advance(3_000); // exp(1) s after the first check
      got = await statusBecomes(t, domain.id, 'partially_verified');
      assert.deepEqual(got.records.map((r) => [r.record, r.type, r.status]), [
        ['SPF', 'MX', 'pending'], ['SPF', 'TXT', 'pending'], ['DKIM', 'TXT', 'verified'], ['DMARC', 'TXT', 'pending'],
      ]);

      publishRecords(dns, domain, ['SPF', 'DMARC']);
      t.advance(8_000); // exp(2) s after the second
      got = await statusBecomes(t, domain.id, 'verified');
      assert.deepEqual(got.records.map((r) => r.status), ['verified', 'verified', 'verified', 'verified']);
    });

    it('does not wait for the DMARC recommendation', async () => {
      const domain = await createDomain(t, 'nodmarc.test');
      publishRecords(dns, domain, ['SPF', 'DKIM']);
      await t.resend.domains.verify(domain.id);
      const got = await statusBecomes(t, domain.id, 'verified');
      assert.equal(got.records[3]!.status, 'pending');
    });

    it('a key record with whitespace split by the DNS provider, or a wrong key, is read as it should be', async () => {
      const split = await createDomain(t, 'split.test');
      const wrong = await createDomain(t, 'wrong.test');
      publishRecords(dns, split, ['SPF']);
      publishRecords(dns, wrong, ['SPF']);
      const key = split.records[2]!.value;
      dns.add(`mailroom._domainkey.split.test`, { TXT: [`v=DKIM1; k=rsa; ${key.slice(0, 100)} ${key.slice(100)}`] });
      dns.add(`mailroom._domainkey.wrong.test`, { TXT: [key] });
      await t.resend.domains.verify(split.id);
      await t.resend.domains.verify(wrong.id);
      await statusBecomes(t, split.id, 'verified');
      await checked(t, wrong.id);
      assert.equal((await domainOf(t, wrong.id)).status, 'partially_verified');
    });

    it('fails a domain whose records are not all found within 72 hours; verify starts a new window', async () => {
      const domain = await createDomain(t, 'never.test');
      await t.resend.domains.verify(domain.id);
      await checked(t, domain.id);
      t.advance(72 * HOUR + 1000);
      const got = await statusBecomes(t, domain.id, 'failed');
      assert.deepEqual(got.records.map((r) => r.status), ['failed', 'failed', 'failed', 'pending']);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `verify-domain:${domain.id}`).executeTakeFirst(), undefined);

      publishRecords(dns, domain);
      await t.resend.domains.verify(domain.id);
      await statusBecomes(t, domain.id, 'verified');
    });

    it('re-checks a verified domain daily: a lost record is temporary_failure, then verified again, or failed after 72 hours', async () => {
      const domain = await createDomain(t, 'flaky.test');
      publishRecords(dns, domain);
      await t.resend.domains.verify(domain.id);
      await statusBecomes(t, domain.id, 'verified');
      const saved = dns.zone.get('mailroom._domainkey.flaky.test')!;
      dns.zone.delete('mailroom._domainkey.flaky.test');

      t.advance(24 * HOUR + 1000);
      let got = await statusBecomes(t, domain.id, 'temporary_failure');
      assert.deepEqual(got.records.map((r) => r.status), ['verified', 'verified', 'temporary_failure', 'verified']);

      dns.zone.set('mailroom._domainkey.flaky.test', saved);
      t.advance(2_000);
      await statusBecomes(t, domain.id, 'verified');

      dns.zone.delete('mailroom._domainkey.flaky.test');
      t.advance(24 * HOUR + 1000);
      await statusBecomes(t, domain.id, 'temporary_failure');
      t.advance(72 * HOUR + 1000);
      got = await statusBecomes(t, domain.id, 'failed');
      assert.equal(got.records[2]!.status, 'failed');
    });

    it('deleting a domain removes its pending checks', async () => {
      const domain = await createDomain(t, 'gone.test');
      await t.resend.domains.verify(domain.id);
      await checked(t, domain.id);
      await t.resend.domains.remove(domain.id);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `verify-domain:${domain.id}`).executeTakeFirst(), undefined);
    });
  });

  describe(`sending rules on the from domain (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    let verified: Domain;
    const email = (from: string) => ({ from, to: 'someone@example.org', subject: 'Hi', text: 'Hello' });
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, { env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'true' } });
      verified = await createDomain(t, 'verified.test');
      publishRecords(dns, verified);
      await t.resend.domains.verify(verified.id);
      await statusBecomes(t, verified.id, 'verified');
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('MAILROOM_REQUIRE_VERIFIED_DOMAIN: a from on a domain that is not verified is 403 validation_error', async () => {
      const pending = await createDomain(t, 'pending.test');
      await t.resend.domains.verify(pending.id);
      for (const from of ['a@unknown.test', 'Acme <a@pending.test>', 'onboarding@resend.dev']) {
        const { data, error } = await t.resend.emails.send(email(from));
        assert.equal(data, null, from);
        assert.equal(error?.statusCode, 403, from);
        assert.equal(error?.name, 'validation_error');
        const domain = from.replace(/.*@|>/g, '');
        assert.equal(
          error?.message,
          `The ${domain} domain is not verified. Please, add and verify your domain with POST /domains and POST /domains/:id/verify (see docs/domains.md).`,
        );
      }
      const batch = await t.resend.batch.send([email('a@verified.test'), email('b@unknown.test')]);
      assert.equal(batch.error?.statusCode, 403);
      assert.match(batch.error!.message, /^Email at index 1: The unknown\.test domain is not verified/);

      assert.equal((await t.resend.emails.send(email('Acme <hello@Verified.TEST>'))).error, null);
    });

    it('a sending_access key with a domain_id sends only from that domain', async () => {
      const { data: key } = await t.resend.apiKeys.create({ name: 'verified only', permission: 'sending_access', domain_id: verified.id });
      const sender = new Resend(key!.token, { baseUrl: t.url });
      assert.equal((await sender.emails.send(email('hi@verified.test'))).error, null);
      const { error } = await sender.emails.send(email('hi@elsewhere.test'));
      assert.deepEqual(error, { statusCode: 403, name: 'validation_error', message: 'This API key can only send from the verified.test domain.' });
      const batch = await sender.batch.send([email('a@verified.test'), email('b@elsewhere.test')], { batchValidation: 'permissive' });
      assert.deepEqual(batch.data!.errors!.map((e) => e.index), [1]);

      const unknown = await t.resend.apiKeys.create({ name: 'nowhere', permission: 'sending_access', domain_id: '0190a000-0000-7000-8000-000000000000' });
      assert.equal(unknown.error?.name, 'validation_error');
      assert.match(unknown.error!.message, /`domain_id`/);
    });

    it('a verified domain in temporary_failure still sends; a failed one does not', async () => {
      const domain = await createDomain(t, 'wobbly.test');
      publishRecords(dns, domain);
      await t.resend.domains.verify(domain.id);
      await statusBecomes(t, domain.id, 'verified');
      dns.zone.delete('send.wobbly.test');
      t.advance(24 * HOUR + 1000);
      await statusBecomes(t, domain.id, 'temporary_failure');
      assert.equal((await t.resend.emails.send(email('a@wobbly.test'))).error, null);
      t.advance(72 * HOUR + 1000);
      await statusBecomes(t, domain.id, 'failed');
      assert.equal((await t.resend.emails.send(email('a@wobbly.test'))).error?.statusCode, 403);
    });
  });

  describe(`sending rules when verification is not required (${dialect})`, () => {
    it('capture and relay modes send from any domain unless MAILROOM_REQUIRE_VERIFIED_DOMAIN says otherwise', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        assert.equal((await t.resend.emails.send({ from: 'a@unverified.test', to: 'b@example.org', subject: 's', text: 't' })).error, null);
      } finally {
        await t.close();
      }
    });
  });
}
