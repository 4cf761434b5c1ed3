// A typical transactional email: about 3 KB of html and 2 KB of text (as in perf-baselines.md).
const paragraph = 'Thanks for your order. We are getting it ready and will let you know as soon as it ships. ';

export const html = `<html><body><h1>Your order</h1>${Array.from({ length: 30 }, (_, i) => `<p>${i}. ${paragraph}</p>`).join('')}</body></html>`;
export const text = Array.from({ length: 22 }, (_, i) => `${i}. ${paragraph}`).join('\n');

export function emailPayload(i: number, from = 'Acme <orders@example.com>') {
  return {
    from,
    to: [`customer${i}@example.com`],
    subject: `Your order #${i}`,
    html,
    text,
    tags: [{ name: 'category', value: 'order' }],
  };
}
