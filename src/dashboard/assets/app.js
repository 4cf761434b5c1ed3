// Mailroom dashboard: light progressive enhancement. Every page works without it.
'use strict';

// Live lists: a table with data-live refreshes its rows from that URL when emails change.
for (const table of document.querySelectorAll('table[data-live]')) {
  const source = new EventSource('/dashboard/events');
  let pending = false;
  source.addEventListener('emails', async () => {
    if (pending) return;
    pending = true;
    try {
      const response = await fetch(table.dataset.live, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      if (response.ok) table.tBodies[0].innerHTML = await response.text();
    } finally {
      pending = false;
    }
  });
}

// On a phone, the sections fold behind the Menu button (the stylesheet hides them while folded).
const nav = document.querySelector('header nav');
const menu = nav?.querySelector('.menu-toggle');
if (menu) {
  nav.classList.add('foldable');
  menu.hidden = false;
  menu.addEventListener('click', () => {
    const open = nav.classList.toggle('open');
    menu.setAttribute('aria-expanded', String(open));
  });
}

// Copy buttons: <button data-copy="text">.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  await navigator.clipboard.writeText(button.dataset.copy);
  const label = button.textContent;
  button.textContent = 'Copied';
  setTimeout(() => (button.textContent = label), 1500);
});

// A page that shows a secret once (a new project's key) is the answer to a POST: replacing its history
// entry makes a reload ask for the list (a GET), not post the form again.
if (document.querySelector('[data-shown-once]')) history.replaceState(null, '', location.href);

// Forms that destroy something ask first: <form data-confirm="Delete this key?">.
document.addEventListener('submit', (event) => {
  const message = event.target.dataset?.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
