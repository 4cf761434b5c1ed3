import assert from 'node:assert/strict';
import { Resend } from 'resend';
import { startApp, type Dialect, type StartOptions, type TestApp } from './harness.ts';

// Two projects on one test app (docs/projects.md): A is the install's default project (the harness's
// key), B is made through the admin key, as an operator would.

export const ADMIN_KEY = 're_admin_0123456789abcdefghijklmnopqrstuvwxyz';
/** An id no project holds: another project's id must answer exactly as this one does. */
export const MISSING_ID = '0192e3a4-1111-7000-8000-000000000000';

export interface TwoProjects {
  t: TestApp;
  a: Resend;
  b: Resend;
  bId: string;
  bKeyId: string;
  bToken: string;
  /** A request with the admin key; the JSON answer and its status. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

export async function startTwoProjects(dialect: Dialect, options: StartOptions = {}, project: Record<string, unknown> = {}): Promise<TwoProjects> {
  const t = await startApp(dialect, { ...options, env: { MAILROOM_ADMIN_KEY: ADMIN_KEY, ...options.env } });
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const created = await admin('POST', '/projects', { name: 'Client B', ...project });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(Object.keys(created.body).sort(), ['api_key', 'id', 'name', 'object'], 'the answer of POST /projects');
  const bToken: string = created.body.api_key.token;
  return { t, a: t.resend, b: new Resend(bToken, { baseUrl: t.url }), bId: created.body.id, bKeyId: created.body.api_key.id, bToken, admin };
}
