import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type ReceivedMessage, type TestSmtpServer } from '../../support/smtp-server.ts';

const receipt = {
  name: 'receipt',
  alias: 'receipt',
  from: 'Acme Store <store@example.com>',
  replyTo: 'help@example.com',
  subject: 'Your {{{PRODUCT}}} for {{{PRICE}}} €',
  html: '<h1>Thanks, {{{NAME|friend}}}!</h1><p>{{{PRODUCT}}} costs <b>{{{PRICE}}}</b> €. {{{NOTE|<i>No note.</i>}}}</p>',
  variables: [
    { key: 'PRODUCT', type: 'string' as const },
    { key: 'PRICE', type: 'number' as const, fallbackValue: 25 },
    { key: 'NAME', type: 'string' as const, fallbackValue: 'customer' },
  ],
};

for (const dialect of dialects) {
  describe(`sending with a template (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url } });
      await t.resend.templates.create(receipt).publish();
      await t.resend.templates.create({ name: 'draft', alias: 'draft', html: 'x', subject: 's', from: 'a@example.com' });
      await t.resend.templates
        .create({ name: 'texts', alias: 'texts', html: '<p>{{{A}}}</p>', text: 'Text: {{{A}}} & {{{B|none}}}', subject: 'S' })
        .publish();
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
    });

    async function received(id: string): Promise<ReceivedMessage> {
      return eventually(() => smtp.messages.find((m) => m.parsed.messageId?.startsWith(`<${id}@`)));
    }

    it('renders html (escaped), subject and a generated text part, with from and reply_to from the template', async () => {
      const { data, error } = await t.resend.emails.send({
        to: 'jane@example.com',
        template: { id: 'receipt', variables: { PRODUCT: 'Tea & <Biscuits>', PRICE: 4.5 } },
      });
      assert.equal(error, null);
      const mail = (await received(data.id)).parsed;
      const html = '<h1>Thanks, customer!</h1><p>Tea &amp; &lt;Biscuits&gt; costs <b>4.5</b> €. <i>No note.</i></p>';
      assert.equal(mail.html, html);
      assert.equal(mail.subject, 'Your Tea & <Biscuits> for 4.5 €', 'the subject takes values as they are');
      assert.equal(mail.text, 'THANKS, CUSTOMER!\n\nTea & <Biscuits> costs 4.5 €. No note.', 'html-to-text on the rendered html');
      assert.deepEqual(mail.from!.value, [{ address: 'store@example.com', name: 'Acme Store' }]);
      assert.deepEqual((mail.replyTo as { value: { address: string }[] }).value.map((v) => v.address), ['help@example.com']);

      const email = (await t.resend.emails.get(data.id)).data!;
      assert.equal(email.html, html);
      assert.equal(email.text, null, 'stored without text: the worker generates it from the rendered html');
      assert.equal(email.subject, 'Your Tea & <Biscuits> for 4.5 €');
      const row = await t.ctx.db.selectFrom('emails').select('template_id').where('id', '=', data.id).executeTakeFirstOrThrow();
      assert.equal(row.template_id, (await t.resend.templates.get('receipt')).data!.id);
    });

    it("renders the template's text part, values inserted as they are, by id as well as by alias", async () => {
      const { id } = (await t.resend.templates.get('texts')).data!;
      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', template: { id, variables: { A: '<x>' } } });
      const mail = (await received(data!.id)).parsed;
      assert.equal(mail.text, 'Text: <x> & none');
      assert.equal(mail.html, '<p>&lt;x&gt;</p>');
      assert.equal((await t.resend.emails.get(data!.id)).data!.text, 'Text: <x> & none');
    });

    it('the payload wins over the template for from, subject and reply_to; the payload subject is taken as it is', async () => {
      const { data } = await t.resend.emails.send({
        from: 'Other <other@example.com>',
        to: 'b@example.com',
        subject: 'Plain {{{PRODUCT}}}',
        replyTo: ['r1@example.com', 'r2@example.com'],
        template: { id: 'receipt', variables: { PRODUCT: 'Tea' } },
      });
      const mail = (await received(data!.id)).parsed;
      assert.equal(mail.subject, 'Plain {{{PRODUCT}}}');
      assert.deepEqual(mail.from!.value, [{ address: 'other@example.com', name: 'Other' }]);
      assert.deepEqual((mail.replyTo as { value: { address: string }[] }).value.map((v) => v.address), ['r1@example.com', 'r2@example.com']);
    });

    it('refuses html or text together with template', async () => {
      for (const extra of [{ html: '<p>x</p>' }, { text: 'x' }, { text: '' }]) {
        const { error } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', template: { id: 'receipt', variables: { PRODUCT: 'x' } }, ...extra } as never);
        assert.equal(error?.statusCode, 422, JSON.stringify(extra));
        assert.equal(error?.name, 'validation_error');
        assert.match(error.message, /`html` and `text`.*`template`/);
      }
    });

    it('sends only published templates: a draft, or an unknown id or alias, gets 422 naming it', async () => {
      const draft = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'draft' } });
      assert.equal(draft.error?.statusCode, 422);
      assert.match(draft.error.message, /Template `draft` is not published/);
      const draftId = (await t.resend.templates.get('draft')).data!.id;
      assert.match((await t.resend.emails.send({ to: 'b@example.com', template: { id: draftId } })).error!.message, /not published/);
      for (const id of ['no-such-alias', '0190a000-0000-7000-8000-000000000000']) {
        const { error } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 's', template: { id } });
        assert.equal(error?.statusCode, 422);
        assert.equal(error?.name, 'validation_error');
        assert.equal(error?.message, `Template \`${id}\` not found.`);
      }
    });

    it('refuses a field given by neither the payload nor the template', async () => {
      const { data } = await t.resend.templates.create({ name: 'bare', alias: 'bare', html: '<p>bare</p>' }).publish();
      assert.ok(data);
      const noFrom = await t.resend.emails.send({ to: 'b@example.com', subject: 's', template: { id: 'bare' } });
      assert.deepEqual(noFrom.error, { statusCode: 422, name: 'missing_required_field', message: 'Missing `from` field.' });
      const noSubject = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', template: { id: 'bare' } });
      assert.equal(noSubject.error?.message, 'Missing `subject` field.');
      const ok = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 's', template: { id: 'bare' } });
      assert.equal((await received(ok.data!.id)).parsed.html, '<p>bare</p>');
    });

    it('refuses a variable the template uses that is neither supplied nor has a fallback, naming it', async () => {
      const missing = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'receipt', variables: { PRICE: 3 } } });
      assert.equal(missing.error?.statusCode, 422);
      assert.equal(missing.error?.name, 'validation_error');
      assert.match(missing.error.message, /template variable `PRODUCT`/);
      // Used only in the subject and the text, and undeclared.
      await t.resend.templates.create({ name: 's', alias: 'in-subject', html: 'x', subject: 'Hi {{{WHO}}}', from: 'a@example.com' }).publish();
      assert.match((await t.resend.emails.send({ to: 'b@example.com', template: { id: 'in-subject' } })).error!.message, /`WHO`/);
      assert.equal((await t.resend.emails.send({ to: 'b@example.com', subject: 'given', template: { id: 'in-subject' } })).error, null, 'a payload subject replaces the template subject, and its variables');
      await t.resend.templates.create({ name: 't', alias: 'in-text', html: 'x', text: '{{{contact.first_name}}}', subject: 's', from: 'a@example.com' }).publish();
      assert.match((await t.resend.emails.send({ to: 'b@example.com', template: { id: 'in-text' } })).error!.message, /`contact\.first_name`/);
    });

    it('prefers a supplied value, then the declared fallback, then the placeholder fallback', async () => {
      const supplied = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'receipt', variables: { PRODUCT: 'P', NAME: 'Ann', NOTE: 'n' } } });
      assert.equal((await received(supplied.data!.id)).parsed.html, '<h1>Thanks, Ann!</h1><p>P costs <b>25</b> €. n</p>');
      const zero = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'receipt', variables: { PRODUCT: '', PRICE: 0 } } });
      assert.equal((await received(zero.data!.id)).parsed.html, '<h1>Thanks, customer!</h1><p> costs <b>0</b> €. <i>No note.</i></p>');
    });

    it('checks values: strings up to 2,000 characters, numbers up to 2^53 - 1, of the declared type, under valid keys', async () => {
      const send = (variables: Record<string, unknown>) =>
        t.resend.emails.send({ to: 'b@example.com', template: { id: 'receipt', variables: { PRODUCT: 'p', ...variables } } });
      const refused: [Record<string, unknown>, RegExp][] = [
        [{ PRODUCT: 'x'.repeat(2001) }, /`template\.variables\.PRODUCT`.*2000/],
        [{ EXTRA: 'x'.repeat(2001) }, /`template\.variables\.EXTRA`/],
        [{ PRICE: Number.MAX_SAFE_INTEGER + 2 }, /`template\.variables\.PRICE`.*2\^53/],
        [{ PRICE: '12' }, /`template\.variables\.PRICE`.*number/],
        [{ PRODUCT: 12 }, /`template\.variables\.PRODUCT`.*string/],
        [{ PRODUCT: true }, /`template\.variables\.PRODUCT`.*a string or a number/],
        [{ PRODUCT: { a: 1 } }, /`template\.variables\.PRODUCT`/],
        [{ FIRST_NAME: 'x' }, /`template\.variables\.FIRST_NAME`.*reserved/],
        [{ 'bad-key': 'x' }, /`template\.variables\.bad-key`/],
      ];
      for (const [variables, message] of refused) {
        const { error } = await send(variables);
        assert.equal(error?.statusCode, 422, JSON.stringify(variables).slice(0, 60));
        assert.match(error.message, message);
      }
      const edge = await send({ PRODUCT: 'x'.repeat(2000), PRICE: Number.MAX_SAFE_INTEGER, UNUSED: -1.5 });
      assert.equal(edge.error, null);
      assert.match((await received(edge.data.id)).parsed.html as string, /<b>9007199254740991<\/b>/);
    });

    it('keeps sending the published version while a newer draft exists, until it is published', async () => {
      await t.resend.templates.create({ name: 'v', alias: 'live', html: '<p>v1 {{{X}}}</p>', subject: 'v1', from: 'a@example.com' }).publish();
      await t.resend.templates.update('live', { html: '<p>v2 {{{Y}}}</p>', subject: 'v2' });
      const first = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'live', variables: { X: 'x' } } });
      assert.equal(first.error, null, 'the variables of the published version apply');
      assert.equal((await received(first.data.id)).parsed.subject, 'v1');
      await t.resend.templates.publish('live');
      const old = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'live', variables: { X: 'x' } } });
      assert.match(old.error!.message, /`Y`/);
      const second = await t.resend.emails.send({ to: 'b@example.com', template: { id: 'live', variables: { Y: 'y' } } });
      const mail = (await received(second.data!.id)).parsed;
      assert.equal(mail.subject, 'v2');
      assert.equal(mail.html, '<p>v2 y</p>');
    });

    it('sends templates in a batch, each entry with its variables; a bad entry is named by its index', async () => {
      const entry = (product: string) => ({ to: `${product}@example.com`, template: { id: 'receipt', variables: { PRODUCT: product } } });
      const { data, error } = await t.resend.batch.send([entry('one'), entry('two'), { from: 'a@example.com', to: 'c@example.com', subject: 'plain', text: 'plain' }]);
      assert.equal(error, null);
      const [one, two, plain] = await Promise.all(data.data.map((d) => received(d.id)));
      assert.equal(one!.parsed.subject, 'Your one for 25 €');
      assert.equal(two!.parsed.subject, 'Your two for 25 €');
      assert.equal(plain!.parsed.text, 'plain\n');

      const strict = await t.resend.batch.send([entry('one'), { to: 'x@example.com', template: { id: 'draft' } }]);
      assert.equal(strict.error?.statusCode, 422);
      assert.match(strict.error.message, /^Email at index 1: Template `draft` is not published/);
      const permissive = await t.resend.batch.send([entry('three'), { to: 'x@example.com', template: { id: 'receipt' } }], { batchValidation: 'permissive' });
      assert.equal(permissive.data!.data.length, 1);
      assert.deepEqual(permissive.data!.errors.map((e) => e.index), [1]);
      assert.match(permissive.data!.errors[0]!.message, /`PRODUCT`/);
    });
  });
}
