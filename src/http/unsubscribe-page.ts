import { escapeHtml } from '../domain/templates/render-template.ts';
import type { Preferences } from '../domain/recipients/unsubscribe.ts';

// The unsubscribe page: the one answer in html rather than JSON. Plain markup, no script, nothing
// loaded from elsewhere; every value shown is escaped. Its forms post back to the page's own URL.

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222;line-height:1.5}' +
  'li{margin:.75rem 0}form{display:inline}button{margin-left:.5rem}.done{padding:.5rem 1rem;background:#eef6ee}';

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

const button = (field: string, value: string, label: string) =>
  `<form method="post"><input type="hidden" name="${field}" value="${escapeHtml(value)}"><button type="submit">${label}</button></form>`;

/** The contact's topics with their current choice, a form to leave each, and one to leave everything. */
export function preferencesPage(preferences: Preferences): string {
  const parts: string[] = [];
  if (preferences.done) parts.push(`<p class="done">${escapeHtml(preferences.done)}</p>`);
  parts.push(`<p>Email preferences for <strong>${escapeHtml(preferences.email)}</strong>.</p>`);
  if (preferences.unsubscribed) {
    parts.push('<p>You are unsubscribed from all of these emails.</p>');
  } else {
    if (preferences.topics.length > 0) {
      const items = preferences.topics.map((topic) => {
        const description = topic.description ? `<br><small>${escapeHtml(topic.description)}</small>` : '';
        const state = topic.subscribed ? `subscribed ${button('topic_id', topic.id, 'Unsubscribe')}` : 'unsubscribed';
        return `<li><strong>${escapeHtml(topic.name)}</strong>: ${state}${description}</li>`;
      });
      parts.push(`<ul>\n${items.join('\n')}\n</ul>`);
    }
    parts.push(`<p>${button('everything', 'true', 'Unsubscribe from all emails')}</p>`);
  }
  return page('Email preferences', parts.join('\n'));
}

/** A page that says what went wrong, for the error handler of the unsubscribe routes. */
export function messagePage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}
