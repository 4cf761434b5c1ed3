// The renderer is pure (no database), so these run once rather than per dialect.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml, parseTemplate, renderTemplate, type Value } from '../../../src/domain/templates/render-template.ts';

const render = (source: string, values: Record<string, Value>, html = false) =>
  renderTemplate(parseTemplate(source), (name) => values[name], html);

describe('render-template', () => {
  it('fills adjacent placeholders, at the very start and end of the source', () => {
    assert.equal(render('{{{A}}}{{{B}}}{{{A}}}', { A: 'x', B: 'y' }), 'xyx');
    assert.equal(render('{{{A}}}', { A: 1 }), '1');
    assert.deepEqual(parseTemplate('{{{A}}}{{{B}}}').texts, ['', '', '']);
  });

  it('takes a value, else the placeholder fallback, else nothing; a value of 0 or "" is a value', () => {
    assert.equal(render('Hi {{{NAME|there}}}!', {}), 'Hi there!');
    assert.equal(render('Hi {{{NAME|there}}}!', { NAME: 'Ann' }), 'Hi Ann!');
    assert.equal(render('[{{{NAME}}}]', {}), '[]');
    assert.equal(render('[{{{N|5}}}][{{{S|x}}}]', { N: 0, S: '' }), '[0][]');
    assert.equal(render('{{{A|}}}.', {}), '.', 'an empty fallback');
    assert.equal(render('{{{P|dear friend, hi}}}', {}), 'dear friend, hi', 'a fallback with spaces and commas');
  });

  it('reads dotted names, for contact fields', () => {
    const parsed = parseTemplate('Hello {{{contact.first_name|there}}}, {{{RESEND_UNSUBSCRIBE_URL}}}');
    assert.deepEqual(parsed.placeholders, [
      { name: 'contact.first_name', fallback: 'there' },
      { name: 'RESEND_UNSUBSCRIBE_URL', fallback: undefined },
    ]);
    assert.equal(renderTemplate(parsed, (n) => ({ 'contact.first_name': 'Zoë' })[n], false), 'Hello Zoë, ');
  });

  it('leaves braces in content and unknown syntax as they stand', () => {
    const source = 'a {b} {{c}} {{{ d }}} {{{e-f}}} {{{.g}}} {{{h.}}} {{{i|j}}k}}} {{{ {{{} }}} function() { return {x: 1}; }';
    assert.deepEqual(parseTemplate(source).placeholders, []);
    assert.equal(render(source, { c: 'C', d: 'D', 'e-f': 'E', i: 'I' }), source);
    assert.equal(render('{{{{A}}}}', { A: 'x' }), '{x}', 'a fourth brace is text');
    assert.equal(render('{{{A}}}}}', { A: 'x' }), 'x}}');
    assert.equal(render('{{{{{{A}}}', { A: 'x' }), '{{{x');
    assert.equal(render('<style>p{color:red}</style>{{{A}}}', { A: 'x' }), '<style>p{color:red}</style>x');
  });

  it('keeps unicode intact in the source, the values and the fallbacks', () => {
    assert.equal(render('¡Hola {{{NOMBRE|amigo 👋}}}! 日本語 {{{X}}} ✓', { X: 'café 🎉' }), '¡Hola amigo 👋! 日本語 café 🎉 ✓');
    assert.equal(render('{{{名}}}', { 名: 'x' }), '{{{名}}}', 'names are ASCII');
  });

  it('escapes looked-up values in html, but not the source or its fallbacks; text is left alone', () => {
    const source = '<a href="{{{URL}}}">{{{NAME|<b>you</b>}}}</a>';
    const value = `"><script>alert('x')</script>&`;
    assert.equal(render(source, { URL: value }, true), `<a href="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"><b>you</b></a>`);
    assert.equal(render('{{{V}}}', { V: value }, false), value);
    assert.equal(escapeHtml('plain text'), 'plain text');
  });

  it('renders numbers as JavaScript writes them', () => {
    assert.equal(render('{{{A}}} {{{B}}} {{{C}}}', { A: 499, B: 4.99, C: -Number.MAX_SAFE_INTEGER }), '499 4.99 -9007199254740991');
  });

  it('parses and renders a 1 MB source with thousands of placeholders exactly', () => {
    const chunk = '<p>Dear {{{NAME}}}, your order {{{ORDER|n/a}}} {braces} ships {{{WHEN}}}.</p>\n';
    const source = chunk.repeat(Math.ceil((1024 * 1024) / chunk.length));
    assert.ok(source.length >= 1024 * 1024);
    const parsed = parseTemplate(source);
    const count = source.length / chunk.length;
    assert.equal(parsed.placeholders.length, 3 * count);
    const out = renderTemplate(parsed, (n) => ({ NAME: 'Ann', WHEN: 'today' })[n], true);
    assert.equal(out, '<p>Dear Ann, your order n/a {braces} ships today.</p>\n'.repeat(count));
  });

  it('renders a parsed source many times with different values', () => {
    const parsed = parseTemplate('Hi {{{N}}}');
    assert.deepEqual(['a', 'b', 'c'].map((n) => renderTemplate(parsed, () => n, false)), ['Hi a', 'Hi b', 'Hi c']);
  });
});
