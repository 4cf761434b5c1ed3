import { html, type Html } from './html.ts';

// The shell of every dashboard page: a header with the navigation, the page's own content, and the
// two assets (one stylesheet, one script). No inline style or script: the Content-Security-Policy
// forbids both.

export const NAV = [
  ['emails', 'Emails'],
  ['received', 'Received'],
  ['broadcasts', 'Broadcasts'],
  ['automations', 'Automations'],
  ['contacts', 'Contacts'],
  ['templates', 'Templates'],
  ['domains', 'Domains'],
  ['api-keys', 'API keys'],
  ['webhooks', 'Webhooks'],
  ['suppressions', 'Suppressions'],
  ['metrics', 'Metrics'],
  ['tls', 'TLS'],
] as const;

export type Section = (typeof NAV)[number][0];

export interface PageOptions {
  /** The section whose link is marked current; none on the sign-in page. `projects`: the admin's pages, whose one section it is. */
  section?: Section | 'projects';
  /** The session's CSRF token: present, the page has the navigation and sign-out. */
  csrfToken?: string;
  /** A notice at the top (what the last change did). */
  notice?: string;
  /** A page's own assets besides the two every page loads, by file name under /dashboard/assets/ (the metrics chart). */
  styles?: string[];
  scripts?: string[];
  /** A page for someone without an account (a shared email): no link into the dashboard, no script. */
  shared?: boolean;
  /** A small form alone (signing in): a narrow column in the middle. */
  narrow?: boolean;
}

export function page(title: string, content: Html, options: PageOptions = {}): string {
  const { section, csrfToken, notice, styles = [], scripts = [], shared = false, narrow = false } = options;
  // On a phone the script folds the sections behind the Menu button; without it they wrap as on a desktop.
  const sections: readonly (readonly [string, string])[] = section === 'projects' ? [['projects', 'Projects']] : NAV;
  const nav = csrfToken
    ? html`<nav aria-label="Sections"><button type="button" class="menu-toggle" aria-expanded="false" aria-controls="sections" hidden>Menu</button><ul id="sections">${sections.map(
        ([path, label]) => html`<li><a href="/dashboard/${path}"${section === path ? html` aria-current="page"` : ''}>${label}</a></li>`,
      )}</ul><form method="post" action="/dashboard/sign-out"><input type="hidden" name="_csrf" value="${csrfToken}"><button type="submit">Sign out</button></form></nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${csrfToken ? html`<meta name="csrf-token" content="${csrfToken}">` : ''}
<title>${title} · Mailroom</title>
<link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/assets/app.css">
${styles.map((name) => html`<link rel="stylesheet" href="/dashboard/assets/${name}">
`)}${shared ? '' : html`<script src="/dashboard/assets/app.js" defer></script>
`}${scripts.map((name) => html`<script src="/dashboard/assets/${name}" defer></script>
`)}
</head>
<body>
<header>${shared ? html`<span class="brand">Mailroom</span>` : html`<a class="brand" href="/dashboard">Mailroom</a>`}${nav}</header>
<main id="main"${narrow ? html` class="narrow"` : ''}>
<h1>${title}</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${content}
</main>
</body>
</html>
`.text;
}
