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
