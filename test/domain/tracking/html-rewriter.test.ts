import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rewriteHtml } from '../../../src/domain/tracking/html-rewriter.ts';
import { createTrackingToken, readTrackingToken, trackingKey } from '../../../src/domain/tracking/tracking-tokens.ts';
import { trackHtml, trackingBaseUrl, type TrackingDomain } from '../../../src/domain/tracking/tracked-html.ts';

// The rewriter changes the href of web links and adds the pixel; every other byte stays as written.

const seen: string[] = [];
const link = (href: string) => {
  seen.push(href);
  return `https://t.example/c?l=${encodeURIComponent(href)}`;
};
const rewrite = (html: string) => {
  seen.length = 0;
  return rewriteHtml(html, { link });
};

describe('the tracking html rewriter', () => {
  it('rewrites the href of <a> and <area>, whatever the quoting and case, and nothing else of the tag', () => {
    const html = `<p><A class=x HREF='https://a.example/1' title="t">one</A><a href=https://b.example/2>two</a><map><area shape=rect href="http://c.example/3"></map></p>`;
    assert.equal(
      rewrite(html),
      `<p><A class=x href="https://t.example/c?l=https%3A%2F%2Fa.example%2F1" title="t">one</A><a href="https://t.example/c?l=https%3A%2F%2Fb.example%2F2">two</a><map><area shape=rect href="https://t.example/c?l=http%3A%2F%2Fc.example%2F3"></map></p>`,
    );
    assert.deepEqual(seen, ['https://a.example/1', 'https://b.example/2', 'http://c.example/3']);
  });

  it('decodes entities as a browser does, so the link is the one a reader would follow', () => {
    rewrite(`<a href="https://a.example/p?x=1&amp;y=2&copy=3&#x26;z=&quot;q&quot;#frag"> </a><a href="  https://b.example/ \n">b</a>`);
    assert.deepEqual(seen, ['https://a.example/p?x=1&y=2&copy=3&z="q"#frag', 'https://b.example/']);
  });

  it('leaves mailto:, tel:, anchors, relative and javascript: links, links in <head>, comments and scripts', () => {
    const html = [
      '<html><head><base href="https://base.example/"><link rel=stylesheet href="https://css.example/s.css"><a href="https://head.example/">x</a></head>',
      '<body><a href="mailto:a@example.com">m</a><a href="tel:+331">t</a><a href="#top">top</a><a href="/relative">r</a>',
      '<a href="javascript:alert(1)">j</a><a href="ftp://f.example/">f</a><a>none</a><a href>empty</a><img src="https://img.example/i.png">',
      '<!-- <a href="https://comment.example/"> --><script>var s = \'<a href="https://script.example/">\';</script>',
      '<style>a[href="https://style.example/"]{}</style></body></html>',
    ].join('');
    assert.equal(rewrite(html), html);
    assert.deepEqual(seen, []);
  });

  it("rewrites links in Outlook's conditional comments (a VML button's, an <a>'s) with the same rules, and no other comment", () => {
    const button = [
      '<html><head><!--[if gte mso 9]><link rel=stylesheet href="https://css.example/o.css"><![endif]--></head><body>',
      '<!--[if mso]>\n<v:roundrect xmlns:v="urn:schemas-microsoft-com:vml" HREF="https://shop.example/buy?a=1&amp;b=2" style="height:40px" arcsize="10%">',
      '<w:anchorlock/><center><a href="https://shop.example/inner">Buy</a> <a href="mailto:a@example.com">m</a></center></v:roundrect>\n<![endif]-->',
      '<!--[IF !mso 9]><a href="https://mail.example.com/unsubscribe/tok">u</a><![endif]-->',
      '<!-- <a href="https://comment.example/"> --><!--[endif]<a href="https://not-if.example/">--><![CDATA[<a href="https://cdata.example/">]]>',
      '</body></html>',
    ].join('');
    const out = rewriteHtml(button, { link: (href) => (href.includes('/unsubscribe/') ? undefined : link(href)) });
    assert.equal(
      out,
      button
        .replace('HREF="https://shop.example/buy?a=1&amp;b=2"', 'href="https://t.example/c?l=https%3A%2F%2Fshop.example%2Fbuy%3Fa%3D1%26b%3D2"')
        .replace('href="https://shop.example/inner"', 'href="https://t.example/c?l=https%3A%2F%2Fshop.example%2Finner"'),
    );
    assert.deepEqual(seen, ['https://shop.example/buy?a=1&b=2', 'https://shop.example/inner']);
  });

  it('reads downlevel-revealed html (<!--[if !mso]><!-->...<!--<![endif]-->) once, as the html it is', () => {
    seen.length = 0;
    const html = '<!--[if !mso]><!--><a href="https://web.example/">w</a><!--<![endif]--><!--[if mso]><a href="https://mso.example/">o</a><![endif]-->';
    assert.equal(
      rewriteHtml(html, { link, pixel: 'https://t.example/o' }).replace(/<img [^>]*\/>$/, '[img]'),
      '<!--[if !mso]><!--><a href="https://t.example/c?l=https%3A%2F%2Fweb.example%2F">w</a><!--<![endif]--><!--[if mso]><a href="https://t.example/c?l=https%3A%2F%2Fmso.example%2F">o</a><![endif]-->[img]',
    );
    assert.deepEqual(seen, ['https://web.example/', 'https://mso.example/']);
  });

  it('puts the pixel after a conditional comment, never into one', () => {
    const img = (html: string) => rewriteHtml(html, { pixel: 'https://t.example/o', link }).replace(/<img [^>]*\/>/, '[img]');
    assert.equal(img('<p>x</p><!--[if mso]></body></html><![endif]-->'), '<p>x</p><!--[if mso]></body></html><![endif]-->[img]');
  });

  it('rewrites only the first href of a tag, the one a browser follows', () => {
    assert.equal(rewrite('<a href="https://one.example/" href="https://two.example/">x</a>'), '<a href="https://t.example/c?l=https%3A%2F%2Fone.example%2F" href="https://two.example/">x</a>');
  });

  it('leaves links the callback declines', () => {
    const html = '<a href="https://keep.example/u/1">u</a>';
    assert.equal(rewriteHtml(html, { link: () => undefined }), html);
  });

  it('escapes what it writes into an attribute', () => {
    assert.equal(rewriteHtml('<a href="https://a.example/">a</a>', { link: () => 'https://t.example/"><script>&' }), '<a href="https://t.example/&#34;&#62;&#60;script&#62;&#38;">a</a>');
    assert.match(rewriteHtml('<p>x</p>', { pixel: 'https://t.example/o/"a&b' }), /src="https:\/\/t\.example\/o\/&#34;a&#38;b"/);
  });

  it('puts the pixel before the last </body>, else </html>, else at the end', () => {
    const img = (html: string) => rewriteHtml(html, { pixel: 'https://t.example/o' }).replace(/<img [^>]*\/>/, '[img]');
    assert.equal(img('<html><body><p>x</p></BODY>\n</html>'), '<html><body><p>x</p>[img]</BODY>\n</html>');
    assert.equal(img('<html><p>x</p></html>'), '<html><p>x</p>[img]</html>');
    assert.equal(img('<p>x</p>'), '<p>x</p>[img]');
    assert.equal(img('<p>x <!-- </body> --></p>'), '<p>x <!-- </body> --></p>[img]');
    assert.match(rewriteHtml('<p>x</p>', { pixel: 'https://t.example/o' }), /<img src="https:\/\/t\.example\/o" width="1" height="1" alt=""/);
  });

  it('survives malformed html: links in tags a browser would read are rewritten, every other byte stays', () => {
    const cases: [string, string][] = [
      ['<div><a href=\'https://a.example/\'>x<p>y', '<div><a href="T">x<p>y'],
      ['<<a href="https://b.example/">>b</a', '<<a href="T">>b</a'],
      ['</a></b><a href="https://c.example/?q=<>">c</a><', '</a></b><a href="T">c</a><'],
      ['<a href="https://d.example/"\n>d</a><body><p>z</i></td>', '<a href="T"\n>d</a><body><p>z</i></td>'],
      ['<a title="x href=https://e.example/">e</a>', '<a title="x href=https://e.example/">e</a>'],
      ['<a href="https://f.example/', '<a href="https://f.example/'],
    ];
    for (const [html, expected] of cases) assert.equal(rewriteHtml(html, { link: () => 'T' }), expected, html);
  });
});

describe('tracking tokens and tracked html', () => {
  const key = trackingKey('test-secret-test-secret-test-secret-0123456789');
  const emailId = '0192e3a4-1111-7000-8000-000000000001';

  it('name the email, the recipient and a click\'s link; an altered, unsigned or other-kind token reads as nothing', () => {
    const open = createTrackingToken(key, { kind: 'open', emailId, recipient: 'ann@example.com' });
    assert.match(open, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(readTrackingToken(key, open, 'open'), { kind: 'open', emailId, recipient: 'ann@example.com' });
    assert.equal(readTrackingToken(key, open, 'click'), undefined);
    const click = createTrackingToken(key, { kind: 'click', emailId, recipient: 'ann@example.com', link: 'https://a.example/é?x=1#f' });
    assert.deepEqual(readTrackingToken(key, click, 'click'), { kind: 'click', emailId, recipient: 'ann@example.com', link: 'https://a.example/é?x=1#f' });
    const [payload, mac] = click.split('.') as [string, string];
    const other = Buffer.from(payload, 'base64url');
    other[other.length - 1] = other.at(-1)! ^ 1;
    assert.equal(readTrackingToken(key, `${other.toString('base64url')}.${mac}`, 'click'), undefined, 'an altered link');
    assert.equal(readTrackingToken(key, payload, 'click'), undefined, 'no signature');
    assert.equal(readTrackingToken(key, `${payload}.${'A'.repeat(22)}`, 'click'), undefined, 'a made-up signature');
    assert.equal(readTrackingToken(trackingKey('another-secret-another-secret-0123456789'), click, 'click'), undefined, 'another secret');
  });

  it('gives each recipient its own URLs and leaves the unsubscribe links', () => {
    const tracking = { emailId, baseUrl: 'https://mail.example.com', open: true, click: true, keep: 'https://mail.example.com/unsubscribe/' };
    const html = '<a href="https://shop.example/">s</a><a href="https://mail.example.com/unsubscribe/tok">u</a>';
    const ann = trackHtml(key, html, { ...tracking, recipient: 'ann@example.com' });
    const bob = trackHtml(key, html, { ...tracking, recipient: 'bob@example.com' });
    assert.notEqual(ann, bob);
    assert.match(ann, /^<a href="https:\/\/mail\.example\.com\/track\/click\/[^"]+">s<\/a><a href="https:\/\/mail\.example\.com\/unsubscribe\/tok">u<\/a><img src="https:\/\/mail\.example\.com\/track\/open\/[^"]+"/);
    assert.equal(trackHtml(key, html, { ...tracking, recipient: 'ann@example.com', open: false, click: false }), html);
  });

  it('point at the tracking subdomain once its CNAME is verified', () => {
    const domain = { name: 'example.com', open_tracking: 1, click_tracking: 0, tracking_subdomain: 'links', record_statuses: { tracking: 'pending' } } as unknown as TrackingDomain;
    assert.equal(trackingBaseUrl(domain, 'https://mail.example.net'), 'https://mail.example.net');
    assert.equal(trackingBaseUrl({ ...domain, record_statuses: { ...domain.record_statuses, tracking: 'verified' } }, 'https://mail.example.net'), 'https://links.example.com');
    assert.equal(trackingBaseUrl({ ...domain, tracking_subdomain: null }, 'https://mail.example.net'), 'https://mail.example.net');
  });
});
