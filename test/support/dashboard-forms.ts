// The dashboard's forms over plain HTTP, as a browser sends them, for the tests that need no browser.
import type { TestApp } from './harness.ts';

/** The value of a form's hidden `_csrf` field in `html`. */
export const csrfField = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;

/** The cookies of `response`'s Set-Cookie headers, as a Cookie header sends them back. */
export const cookiesOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');

/** GET /dashboard/sign-in: the form's CSRF cookie (a Cookie header) and its `_csrf` field. */
export async function signInForm(t: TestApp): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${t.url}/dashboard/sign-in`);
  return { cookie: cookiesOf(form), csrf: csrfField(await form.text()) };
}

/** POSTs `fields` to `path` as a form does, with `cookie`; redirects are left to the caller. */
export function postForm(t: TestApp, path: string, fields: Record<string, string>, cookie: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, ...(cookie === undefined ? {} : { cookie }), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Signs in with `key` as the sign-in form does: the answer, whose cookies hold the session when it worked. */
export async function signIn(t: TestApp, key: string): Promise<Response> {
  const { cookie, csrf } = await signInForm(t);
  return postForm(t, '/dashboard/sign-in', { _csrf: csrf, next: '/dashboard/emails', api_key: key }, cookie);
}
