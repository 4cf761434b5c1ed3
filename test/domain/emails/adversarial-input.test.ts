import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withPreviewText } from '../../../src/domain/broadcasts/broadcast-render.ts';
import { parseTemplate, renderTemplate } from '../../../src/domain/templates/render-template.ts';
import { startThread } from '../../../src/threads.ts';
import { requestJson, startApp, type TestApp } from '../../support/harness.ts';
import type { Parser } from '../../support/hostile-input-thread.ts';

// Inputs shaped so that a parser which backtracks takes time in the square of their length: at a
// megabyte that is many minutes, where a linear parser takes milliseconds. Each runs on a thread of its
// own, given up on after a minute, so that a regression fails instead of hanging the suite.
const MB = 1024 * 1024;
const THREAD = new URL('../../support/hostile-input-thread.ts', import.meta.url);

function parse(parser: Parser, input: string): Promise<unknown> {
  const thread = startThread(THREAD, { parser, input });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void thread.terminate();
      reject(new Error(`the ${parser} parser did not finish within a minute: it backtracks`));
    }, 60_000);
    thread.once('message', (value) => {
      clearTimeout(timer);
      void thread.terminate();
      resolve(value);
    });
    thread.once('error', reject);
  });
}

describe('parsers on hostile input', () => {
  it('reads `Name <address>` in one pass, however the value is shaped', async () => {
    for (const value of [`${' '.repeat(MB)}x>`, `${'<'.repeat(MB)}>`, `a${' <'.repeat(MB / 2)}`, `"${'\\"'.repeat(MB / 2)}`]) {
      assert.match(String(await parse('mailbox', value)), /`from`/);
    }
    assert.equal(await parse('mailbox', `"${'<'.repeat(MB)}" <a@example.com>`), 'a@example.com');
  });

  it('finds placeholders in one pass, however many `{{{` never close', async () => {
    assert.equal(await parse('template', '{{{a|'.repeat(MB / 5)), 0);
    assert.equal(await parse('template', `${'{{{a'.repeat(MB / 4)}{{{NAME|there}}}!`), 1);
    // The fallback runs to the first `}`: here, that of the one placeholder that closes.
    const [open] = parseTemplate(`${'{{{a|'.repeat(100)}{{{NAME}}}`).placeholders;
    assert.equal(open!.name, 'a');
    assert.deepEqual(parseTemplate('x{{{NAME|there}}}!').placeholders, [{ name: 'NAME', fallback: 'there' }]);
    assert.equal(renderTemplate(parseTemplate('{{{{A}}}} {{{B|b}}}'), (name) => (name === 'A' ? 1 : undefined), false), '{1} b');
  });

  it('puts a preview text after the opening <body> in one pass, however many "<body" never close', async () => {
    const html = '<body'.repeat(MB / 5);
    assert.equal(await parse('preview', html), html.length + withPreviewText('', 'Preview').length);
    assert.match(withPreviewText('<html><BODY class="x"><p>Hi</p>', 'Preview'), /^<html><BODY class="x"><div style="display:none[^>]*>Preview<\/div><p>Hi/);
  });

  it('reads a bounce or complaint report in one pass, however long or odd its fields', async () => {
    const dsn = (recipient: string, boundary = 'b') =>
      `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"\r\n\r\n--${boundary}\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.test\r\n\r\nFinal-Recipient: ${recipient}\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--${boundary}--\r\n`;
    const arf = (recipient: string) =>
      `Content-Type: multipart/report; report-type=feedback-report; boundary=b\r\n\r\n--b\r\nContent-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\nOriginal-Rcpt-To: ${recipient}\r\n\r\n--b--\r\n`;
    // The shape that took 41.6 s at 256 KB: `a@a@a@...` that never ends as an address.
    for (const recipient of [`rfc822; ${'a@'.repeat(MB / 2)} x`, `${'a@'.repeat(MB / 2)} x`, `rfc822; <${'<'.repeat(MB)}`, `${';'.repeat(MB)}a@b`]) {
      const read = (await parse('report', dsn(recipient))) as { recipients: { address: unknown }[] };
      assert.equal(read.recipients[0]!.address, undefined);
    }
    const complaint = (await parse('report', arf(`${'a@'.repeat(MB / 2)} x`))) as { kind: string; originalRecipient: unknown };
    assert.deepEqual([complaint.kind, complaint.originalRecipient], ['complaint', undefined]);
    assert.equal(await parse('report', dsn('rfc822; a@example.com', 'x'.repeat(MB))), null, 'a boundary of a megabyte is no report');
    const read = (await parse('report', dsn(`rfc822; <gone@example.com>${'\r\n '.repeat(MB / 3)}`))) as { recipients: { address: unknown }[] };
    assert.equal(read.recipients[0]!.address, 'gone@example.com', 'a megabyte of folding is unfolded and cut, in one pass');
  });

  it('reads a CSV number, an html link, a rule and a header block in one pass', async () => {
    assert.equal(await parse('csv-number', `${'1'.repeat(MB)}x`), null);
    assert.deepEqual(await parse('csv-number', '-12.5e3'), { email: 'a@example.com', first_name: undefined, last_name: undefined, values: [{ property_id: 'p', value: -12500 }] });
    const spaced = ' '.repeat(MB / 2);
    assert.ok(Number(await parse('html-links', `<a href="${spaced}x${spaced}y">z</a>`)) > 0);
    assert.ok(Number(await parse('html-links', '<!--[if mso]>'.repeat(MB / 13))) > 0, 'conditional comments are read one level deep');
    assert.match(String(await parse('rule', JSON.stringify({ type: 'rule', field: `event.${'a'.repeat(MB)} `, operator: 'eq', value: 1 }))), /must start with/);
    assert.match(String(await parse('rule', JSON.stringify({ type: 'rule', field: 'event.at', operator: 'gt', value: `${'1 '.repeat(MB / 2)}` }))), /must be a number \(or a date\)/);
    assert.equal(await parse('rule', JSON.stringify({ type: 'rule', field: 'event.at', operator: 'contains', value: `${'a'.repeat(MB)}` })), true);
    assert.equal(await parse('header-block', `Subject: x${'\r\n '.repeat(MB / 3)}\r\n\r\nbody`), 1);
  });

  it('refuses a received message whose header passes 5,000 lines or a megabyte, and reads the rest', async () => {
    // Folded lines: mailauth reads them in time that grows with their square (39 s for 256 KB).
    assert.match(String(await parse('message', `From: a@sender.test\r\nSubject: x${'\r\n '.repeat(MB / 3)}\r\n\r\nbody`)), /^Message header too large: at most 5000 lines/);
    assert.match(String(await parse('message', `From: a@sender.test\r\nX-Long: ${'a'.repeat(MB + 10)}\r\n\r\nbody`)), /^Message header too large/);
    const big = (header: string) => `From: a@sender.test\r\n${header}\r\n\r\nbody`;
    const nearly = MB - 1000;
    for (const header of [`To: ${'<'.repeat(nearly)}`, `Cc: ${'a@'.repeat(nearly / 2)} x`, `Subject: ${'=?utf-8?q?a?= '.repeat(nearly / 14)}`, `Reply-To: "${'\\"'.repeat(nearly / 2)}`, `References: ${'<a@b> '.repeat(nearly / 6)}`, `Date: ${'1 '.repeat(nearly / 2)}`, `DKIM-Signature: v=1; ${'a=b; '.repeat(nearly / 5)}`]) {
      const read = await parse('message', big(header));
      assert.equal(typeof read === 'object' && read !== null && (read as { from: string }).from, 'a@sender.test', header.slice(0, 20));
    }
  });

  describe('with the app', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp('sqlite', { worker: false });
    });
    after(() => t.close());

    it('caps a template at 1,000 placeholders, and what its variables may render to', async () => {
      const many = await requestJson(t, 'POST', '/templates', { name: 'many', html: '{{{A}}}'.repeat(1001) });
      assert.equal(many.status, 422);
      assert.match(many.body.message, /`html`.*1000 placeholders/);
      // 1,000 placeholders of a 2,000-character value add 2 MB: past 20 MB the send is refused.
      const html = `${'x'.repeat(19 * MB)}${'{{{A}}}'.repeat(1000)}`;
      const created = await requestJson(t, 'POST', '/templates', { name: 'big', alias: 'big', html, variables: [{ key: 'A', type: 'string' }] });
      assert.equal(created.status, 201);
      assert.equal((await requestJson(t, 'POST', '/templates/big/publish')).status, 200);
      const send = (value: string) =>
        requestJson(t, 'POST', '/emails', { from: 'a@example.com', to: 'b@example.com', subject: 's', template: { id: 'big', variables: { A: value } } });
      const refused = await send('v'.repeat(2000));
      assert.equal(refused.status, 422);
      assert.match(refused.body.message, /rendered template is larger than 20 MB/);
      assert.equal((await send('short')).status, 200);
    });
  });
});
