import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signingSecretOf } from '../../../src/domain/webhooks/endpoints.ts';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

// The sandbox that wrote these tests resolves no public names, so the happy path uses a public IP
// literal; `localhost` (from /etc/hosts) and `.invalid` (RFC 6761) behave the same everywhere.
const ENDPOINT = 'https://93.184.215.14/hook';
const PRIVATE = ['http://127.0.0.1/x', 'http://10.0.0.1/x', 'http://[::1]/x', 'http://[::7f00:1]/x', 'http://localhost/x', 'http://169.254.169.254/latest'];
const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;

for (const dialect of dialects) {
  describe(`webhook endpoints (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('creates (201) with a whsec_ secret, gets, updates, rotates and deletes through the SDK', async () => {
      const created = await requestJson(t, 'POST', '/webhooks', { endpoint: ENDPOINT, events: ['email.sent', 'email.bounced'] });
      assert.equal(created.status, 201);
      assert.deepEqual(Object.keys(created.body), ['object', 'id', 'signing_secret']);
      assert.equal(created.body.object, 'webhook');
      assert.match(created.body.signing_secret, SECRET);
      const id = created.body.id as string;

      const { data: got } = await t.resend.webhooks.get(id);
      assert.deepEqual({ ...got!, created_at: 'x' }, {
        object: 'webhook',
        id,
        created_at: 'x',
        status: 'enabled',
        endpoint: ENDPOINT,
        events: ['email.sent', 'email.bounced'],
        signing_secret: created.body.signing_secret,
      });

      const sdk = await t.resend.webhooks.create({ endpoint: 'http://93.184.215.14:8080/other', events: ['contact.created'] });
      assert.match(sdk.data!.signing_secret, SECRET);
      assert.notEqual(sdk.data!.signing_secret, created.body.signing_secret);

      const update = { endpoint: 'https://93.184.215.14/v2', events: ['email.delivered' as const], status: 'disabled' as const };
      assert.deepEqual((await t.resend.webhooks.update(id, update)).data, { object: 'webhook', id });
      const updated = (await t.resend.webhooks.get(id)).data as unknown as Record<string, unknown>;
      assert.deepEqual([updated.endpoint, updated.events, updated.status, updated.disabled_reason], [update.endpoint, update.events, 'disabled', null]);

      const rotated = await t.resend.webhooks.rotateSigningSecret(id);
      assert.deepEqual(Object.keys(rotated.data!), ['object', 'id', 'signing_secret']);
      assert.match(rotated.data!.signing_secret, SECRET);
      assert.notEqual(rotated.data!.signing_secret, created.body.signing_secret);
      assert.equal((await t.resend.webhooks.get(id)).data!.signing_secret, rotated.data!.signing_secret);

      assert.deepEqual((await t.resend.webhooks.remove(id)).data, { object: 'webhook', id, deleted: true });
      assert.deepEqual((await t.resend.webhooks.get(id)).error, { statusCode: 404, name: 'not_found', message: 'Webhook not found' });
      assert.equal((await t.resend.webhooks.remove(id)).error?.statusCode, 404);
      assert.equal((await t.resend.webhooks.update(id, { status: 'enabled' })).error?.statusCode, 404);
      assert.equal((await t.resend.webhooks.rotateSigningSecret(id)).error?.statusCode, 404);
      assert.equal((await t.resend.webhooks.get('not-an-id')).error?.statusCode, 404, 'a path that is no id is no route');
    });

    it('stores the signing secret sealed to its webhook, not in the clear', async () => {
      const { data } = await t.resend.webhooks.create({ endpoint: ENDPOINT, events: ['email.sent'] });
      const row = await t.ctx.db.selectFrom('webhooks').selectAll().where('id', '=', data!.id).executeTakeFirstOrThrow();
      assert.ok(!row.signing_secret.includes(data!.signing_secret.slice('whsec_'.length)), row.signing_secret);
      assert.equal(signingSecretOf(t.ctx, row), data!.signing_secret);
      assert.throws(() => signingSecretOf(t.ctx, { ...row, id: '00000000-0000-7000-8000-000000000000' }), /^Error: Unsupported state or unable to authenticate data$/, 'sealed to its own id');
    });

    it('enabling clears why the webhook was disabled and since when it failed', async () => {
      const { data } = await t.resend.webhooks.create({ endpoint: ENDPOINT, events: ['email.sent'] });
      const id = data!.id;
      const failing = { status: 'disabled' as const, disabled_reason: 'failing for 5 days', failing_since: 1_700_000_000_000 };
      await t.ctx.db.updateTable('webhooks').set(failing).where('id', '=', id).execute();
      const { body: disabled } = await requestJson(t, 'GET', `/webhooks/${id}`);
      assert.deepEqual([disabled.status, disabled.disabled_reason], ['disabled', 'failing for 5 days']);

      await t.resend.webhooks.update(id, { status: 'enabled' });
      const row = await t.ctx.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual([row.status, row.disabled_reason, row.failing_since], ['enabled', null, null]);
      const { body: enabled } = await requestJson(t, 'GET', `/webhooks/${id}`);
      assert.equal('disabled_reason' in enabled, false, 'shown only while disabled');
    });

    it('refuses unknown or no event types, URLs that are not http(s), and a bad status (422)', async () => {
      const bad = [
        [{ endpoint: ENDPOINT, events: ['email.sent', 'email.nope'] }, 'validation_error', /`events\[1\]`.*"email\.nope"/],
        [{ endpoint: ENDPOINT, events: [] }, 'validation_error', /`events`.*at least one/],
        [{ endpoint: 'ftp://93.184.215.14/hook', events: ['email.sent'] }, 'validation_error', /`endpoint`.*http or https/],
        [{ endpoint: 'not a url', events: ['email.sent'] }, 'validation_error', /`endpoint`.*not an absolute URL/],
        [{ endpoint: '/hook', events: ['email.sent'] }, 'validation_error', /`endpoint`.*not an absolute URL/],
        [{ events: ['email.sent'] }, 'missing_required_field', /`endpoint`/],
        [{ endpoint: ENDPOINT }, 'missing_required_field', /`events`/],
        [{ endpoint: 'https://nowhere.invalid/hook', events: ['email.sent'] }, 'validation_error', /`endpoint`.*"nowhere\.invalid" could not be resolved/],
      ] as const;
      for (const [body, name, message] of bad) {
        const response = await requestJson(t, 'POST', '/webhooks', body);
        assert.equal(response.status, 422, JSON.stringify(body));
        assert.equal(response.body.name, name, JSON.stringify(body));
        assert.match(response.body.message, message);
      }
      const sdk = await t.resend.webhooks.create({ endpoint: ENDPOINT, events: ['inbox.created'] });
      assert.equal(sdk.error?.statusCode, 422, 'a type this server does not know');

      const { data } = await t.resend.webhooks.create({ endpoint: ENDPOINT, events: ['email.sent'] });
      for (const body of [{ status: 'paused' }, { events: [] }, { events: ['nope'] }, { endpoint: 'mailto:a@example.com' }]) {
        const response = await requestJson(t, 'PATCH', `/webhooks/${data!.id}`, body);
        assert.equal(response.status, 422, JSON.stringify(body));
      }
      const unchanged = (await t.resend.webhooks.get(data!.id)).data!;
      assert.deepEqual([unchanged.endpoint, unchanged.events, unchanged.status], [ENDPOINT, ['email.sent'], 'enabled'], 'refused updates changed nothing');
    });

    it('refuses loopback, private and link-local endpoints, as literals or by name, on create and update', async () => {
      const { data } = await t.resend.webhooks.create({ endpoint: ENDPOINT, events: ['email.sent'] });
      for (const endpoint of PRIVATE) {
        const created = await t.resend.webhooks.create({ endpoint, events: ['email.sent'] });
        assert.equal(created.error?.statusCode, 422, endpoint);
        assert.match(created.error.message, /`endpoint`.*(loopback, private (and|or) link-local)/, endpoint);
        // It names the setting that allows them, for the developer whose receiver is on localhost.
        assert.match(created.error.message, /set MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS=true to allow them/, endpoint);
        assert.equal((await t.resend.webhooks.update(data!.id, { endpoint })).error?.statusCode, 422, endpoint);
      }
      assert.equal((await t.resend.webhooks.get(data!.id)).data!.endpoint, ENDPOINT);
      assert.deepEqual(await t.ctx.db.selectFrom('webhooks').select('endpoint').where('endpoint', 'in', PRIVATE).execute(), []);
    });

    it('accepts private endpoints with MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS=true', async () => {
      const open = await startApp(dialect, { worker: false, env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      try {
        for (const endpoint of PRIVATE) {
          const created = await open.resend.webhooks.create({ endpoint, events: ['email.sent'] });
          assert.match(created.data?.signing_secret ?? JSON.stringify(created.error), SECRET, endpoint);
          assert.equal((await open.resend.webhooks.get(created.data!.id)).data!.endpoint, endpoint);
        }
        const ftp = await open.resend.webhooks.create({ endpoint: 'ftp://10.0.0.1/x', events: ['email.sent'] });
        assert.equal(ftp.error?.statusCode, 422, 'still http(s) only');
      } finally {
        await open.close();
      }
    });

    it('lists newest first, paginated (20 by default), each row a webhook with its secret', async () => {
      const fresh = await startApp(dialect, { worker: false });
      try {
        const ids: string[] = [];
        const secrets: string[] = [];
        for (let i = 0; i < 22; i++) {
          const created = (await fresh.resend.webhooks.create({ endpoint: `${ENDPOINT}/${i}`, events: ['email.sent'] })).data!;
          ids.push(created.id);
          secrets.push(created.signing_secret);
        }
        const all = (await fresh.resend.webhooks.list()).data!;
        assert.deepEqual([all.object, all.has_more, all.data.length], ['list', true, 20]);
        // The Python SDK's Webhook type requires `object` and `signing_secret` on each row.
        assert.deepEqual({ ...all.data[0]!, created_at: 'x' }, {
          object: 'webhook',
          id: ids[21],
          endpoint: `${ENDPOINT}/21`,
          created_at: 'x',
          status: 'enabled',
          events: ['email.sent'],
          signing_secret: secrets[21],
        });
        assert.deepEqual(all.data.map((w) => (w as { signing_secret?: string }).signing_secret), secrets.slice(2).reverse());
        const first = (await fresh.resend.webhooks.list({ limit: 2 })).data!;
        assert.deepEqual([first.has_more, first.data.map((w) => w.id)], [true, [ids[21], ids[20]]]);
        const next = (await fresh.resend.webhooks.list({ limit: 20, after: ids[20] })).data!;
        assert.deepEqual([next.has_more, next.data.map((w) => w.id)], [false, ids.slice(0, 20).reverse()]);
        const back = (await fresh.resend.webhooks.list({ limit: 1, before: ids[19] })).data!;
        assert.deepEqual(back.data.map((w) => w.id), [ids[20]]);
        assert.equal((await fresh.resend.webhooks.list({ limit: 101 })).error?.statusCode, 422);
      } finally {
        await fresh.close();
      }
    });

    it('keeps the enabled webhooks in the cache events read, anew after each change', async () => {
      const fresh = await startApp(dialect, { worker: false });
      try {
        const create = async (events: ('email.sent' | 'email.bounced')[]) =>
          (await fresh.resend.webhooks.create({ endpoint: ENDPOINT, events })).data!.id;
        const sent = await create(['email.sent']);
        const both = await create(['email.bounced', 'email.sent']);
        const bounced = await create(['email.bounced']);
        const disabled = await create(['email.sent']);
        await fresh.resend.webhooks.update(disabled, { status: 'disabled' });
        const ids = async (type: string) => (await fresh.ctx.webhooks.enabled()).filter((w) => w.events.includes(type)).map((w) => w.id).sort();
        assert.deepEqual(await ids('email.sent'), [sent, both].sort());
        assert.deepEqual(await ids('email.bounced'), [both, bounced].sort());
        assert.deepEqual(await ids('email.delivered'), []);
        const row = (await fresh.ctx.webhooks.enabled()).find((w) => w.id === both);
        assert.deepEqual(row!.events, ['email.bounced', 'email.sent'], 'events parsed');
      } finally {
        await fresh.close();
      }
    });
  });
}
