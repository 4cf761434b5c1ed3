import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, rowCount, startApp, type TestApp } from '../support/harness.ts';
import { cookiesOf, csrfField, postForm, signIn, signInForm } from '../support/dashboard-forms.ts';

// The dashboard's CSRF checks over plain HTTP, so that they run where no browser does: the sign-in
// form's (a double-submit cookie), and every change's under a session (the session's token).

const EXPIRED = /<p class="error" role="alert">This form has expired: please sign in again\.<\/p>/;

for (const dialect of dialects) {
  describe(`the dashboard's CSRF checks, over HTTP (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('refuses a sign-in, with the right key, whose _csrf is missing, wrong, from another form or without its cookie', async () => {
      const { cookie, csrf } = await signInForm(t);
      const other = await signInForm(t);
      const refusals: [string, Record<string, string>, string | undefined][] = [
        ['no _csrf', {}, cookie],
        ['an empty _csrf', { _csrf: '' }, cookie],
        ['a wrong _csrf', { _csrf: `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}` }, cookie],
        ["another form's _csrf", { _csrf: other.csrf }, cookie],
        ['no cookie', { _csrf: csrf }, undefined],
      ];
      for (const [what, fields, sent] of refusals) {
        const response = await postForm(t, '/dashboard/sign-in', { next: '/dashboard/emails', api_key: t.token, ...fields }, sent);
        assert.equal(response.status, 403, what);
        assert.ok(!response.headers.getSetCookie().some((c) => c.startsWith('mailroom_session=')), `${what}: a session cookie`);
        assert.match(await response.text(), EXPIRED, what);
      }
      assert.equal(await rowCount(t, 'dashboard_sessions'), 0, 'no session was opened');

      const signedIn = await postForm(t, '/dashboard/sign-in', { _csrf: csrf, next: '/dashboard/emails', api_key: t.token }, cookie);
      assert.equal(signedIn.status, 303);
      assert.equal(signedIn.headers.get('location'), '/dashboard/emails');
      assert.equal(await rowCount(t, 'dashboard_sessions'), 1);
    });

    it("refuses a change under a session whose _csrf is missing, wrong or another session's, and makes it with the session's", async () => {
      const session = cookiesOf(await signIn(t, t.token));
      const otherSession = cookiesOf(await signIn(t, t.token));
      const page = await fetch(`${t.url}/dashboard/emails`, { headers: { cookie: session } });
      assert.equal(page.status, 200);
      const csrf = csrfField(await page.text());
      const otherCsrf = csrfField(await (await fetch(`${t.url}/dashboard/emails`, { headers: { cookie: otherSession } })).text());
      assert.notEqual(otherCsrf, csrf, 'each session has its own token');

      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Later', text: 'x', scheduledAt: 'in 1 hour' });
      const cancel = `/dashboard/emails/${data!.id}/cancel`;
      const refusals: [string, Record<string, string>, Record<string, string>][] = [
        ['no _csrf', {}, {}],
        ['a wrong _csrf', { _csrf: 'forged' }, {}],
        ["another session's _csrf", { _csrf: otherCsrf }, {}],
        ["another session's x-csrf-token", {}, { 'x-csrf-token': otherCsrf }],
      ];
      for (const [what, fields, headers] of refusals) {
        const response = await postForm(t, cancel, fields, session, headers);
        assert.equal(response.status, 403, what);
        assert.match(await response.text(), /did not come from the dashboard/, what);
      }
      assert.equal((await t.resend.emails.get(data!.id)).data!.last_event, 'scheduled');

      assert.equal((await postForm(t, cancel, { _csrf: csrf }, session)).status, 303);
      assert.equal((await t.resend.emails.get(data!.id)).data!.last_event, 'canceled');
    });
  });
}
