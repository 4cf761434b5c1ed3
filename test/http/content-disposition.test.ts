import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachmentDisposition } from '../../src/http/content-disposition.ts';

describe('Content-Disposition of a download', () => {
  it('quotes a plain name as it is, and names nothing without one', () => {
    assert.equal(attachmentDisposition('report 2026.pdf'), 'attachment; filename="report 2026.pdf"');
    assert.equal(attachmentDisposition(null), 'attachment');
    assert.equal(attachmentDisposition('\r\n'), 'attachment');
  });

  it('cannot be broken out of: quotes, backslashes and line breaks never reach the header as such', () => {
    const header = attachmentDisposition('a"; filename="evil.html\r\nSet-Cookie: x=1\\.txt');
    assert.doesNotMatch(header, /[\r\n\\]/);
    assert.equal(header.match(/"/g)!.length, 2, header);
    assert.match(header, /^attachment; filename="a_; filename=_evil.htmlSet-Cookie: x=1_.txt"; filename\*=UTF-8''a%22%3B%20filename%3D%22evil.htmlSet-Cookie%3A%20x%3D1%5C.txt$/);
  });

  it("keeps a non-ASCII name whole in RFC 5987's filename*, beside an ASCII stand-in", () => {
    assert.equal(attachmentDisposition('Übersicht €.pdf'), `attachment; filename="_bersicht _.pdf"; filename*=UTF-8''%C3%9Cbersicht%20%E2%82%AC.pdf`);
    assert.equal(attachmentDisposition("it's (1)*.txt"), `attachment; filename="it's (1)*.txt"`);
    assert.equal(attachmentDisposition('\ud800.txt'), `attachment; filename="_.txt"; filename*=UTF-8''%EF%BF%BD.txt`);
  });
});
