// The preview is pure over a template's content, so these run once rather than per dialect.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderPreview } from '../../../src/domain/templates/preview-template.ts';

const variable = (key: string, fallback_value: string | number | null = null) => ({ id: key, key, type: 'string' as const, fallback_value, created_at: '', updated_at: '' });

describe('template preview', () => {
  const template = {
    subject: 'Hi {{{NAME}}}',
    html: '<p>{{{NAME}}} / {{{PLAN}}} / {{{SEATS|3}}} / {{{NAME|own}}} / [{{{UNDECLARED}}}]</p>',
    text: null,
    variables: [variable('NAME'), variable('PLAN', 'free'), variable('SEATS')],
  };

  it('shows the sample value, else the declared fallback, else the placeholder\'s own, else the name', () => {
    assert.deepEqual(renderPreview(template, {}), { subject: 'Hi NAME', html: '<p>NAME / free / 3 / own / [UNDECLARED]</p>', text: null });
    assert.equal(renderPreview(template, { NAME: 'Ann', PLAN: 'pro' }).html, '<p>Ann / pro / 3 / Ann / [UNDECLARED]</p>');
  });

  it('escapes sample values in the html only, as sending does, and ignores undeclared or empty ones', () => {
    const preview = renderPreview(template, { NAME: '<b>A&B</b>', UNDECLARED: 'x', PLAN: '' });
    assert.equal(preview.subject, 'Hi <b>A&B</b>');
    assert.equal(preview.html, '<p>&lt;b&gt;A&amp;B&lt;/b&gt; / free / 3 / &lt;b&gt;A&amp;B&lt;/b&gt; / [UNDECLARED]</p>');
  });

  it('refuses a sample longer than a variable value may be', () => {
    assert.throws(() => renderPreview(template, { NAME: 'x'.repeat(2001) }), { code: 'validation_error' });
  });
});
