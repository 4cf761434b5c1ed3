// The authorization matrix across projects (docs/projects.md), over every route of the app's route table
// (a new route is covered without a change here): project B's key, or B's dashboard session, given an
// id of project A's answers exactly as it answers an id no project holds; B's lists and counts name
// nothing of A's; and A's rows are all there afterwards, whatever B tried. Each area's own test
// (test/projects/*.test.ts) sends B real bodies; this one proves no route was forgotten.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cookiesOf, csrfField, signIn } from '../support/dashboard-forms.ts';
import { dialects, eventually, type TestApp } from '../support/harness.ts';
import { MISSING_ID, startTwoProjects, type TwoProjects } from '../support/projects.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** A route's path without its parameters' patterns: `/emails/:id`. */
const plain = (url: string) => url.replace(/\([^)]*\)/g, '');

/** The resource a path segment names, as the segment before a parameter says it. */
const RESOURCE: Record<string, string> = {
  emails: 'email',
  attachments: 'attachment',
  receiving: 'received',
  received: 'received',
  templates: 'template',
  contacts: 'contact',
  segments: 'segment',
  audiences: 'segment',
  topics: 'topic',
  'contact-properties': 'property',
  properties: 'property',
  imports: 'import',
  domains: 'domain',
  tracking: 'tracking',
  broadcasts: 'broadcast',
  webhooks: 'webhook',
  suppressions: 'suppression',
  logs: 'log',
  automations: 'automation',
  'api-keys': 'apiKey',
};

/** `path` with each parameter given A's id of the resource its segment names, or MISSING_ID. */
function withIds(path: string, ids: Record<string, string>): string {
  const parts = path.split('/');
  return parts
    .map((part, i) => {
      if (!part.startsWith(':')) return part;
      const before = parts[i - 1]!;
      // A custom event is named by its id or its name (GET /events/:identifier).
      if (part === ':identifier') return ids.event ?? MISSING_ID;
      if (part === ':event_id' && before === 'events') return ids.webhookEvent ?? MISSING_ID;
      return ids[RESOURCE[before] ?? ''] ?? MISSING_ID;
    })
    .join('/');
}

interface Answer {
  status: number;
  name?: string;
  message?: string;
  text: string;
  /** The whole answer, the ids taken out. */
  blind: string;
}

async function answerOf(response: Response, ids: string[]): Promise<Answer> {
  const text = await response.text();
  let body: { name?: string; message?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // A page, not JSON: its status says enough.
  }
  // An id echoed back is the caller's own input: compare the answers with the ids taken out.
  const blind = (s: string | undefined) => ids.reduce((out, id) => out?.split(id).join('ID'), s);
  return { status: response.status, name: body.name, message: blind(body.message), text, blind: blind(text)! };
}

for (const dialect of dialects) {
  describe(`projects: every route, two projects (${dialect})`, () => {
    let p: TwoProjects;
    let t: TestApp;
    let receiver: WebhookReceiver;
    /** Project A's ids, by resource. */
    const ids: Record<string, string> = {};

    before(async () => {
      receiver = await startWebhookReceiver();
      const env = { MAILROOM_MAX_AUTH_FAILURES: '10000', MAILROOM_PUBLIC_RATE_LIMIT: '0', MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' };
      p = await startTwoProjects(dialect, { env });
      t = p.t;
      const { a } = p;
      const data = <T>(result: { data: T | null; error: unknown }): T => {
        assert.equal(result.error, null, JSON.stringify(result.error));
        return result.data!;
      };
      ids.webhook = data(await a.webhooks.create({ endpoint: receiver.url, events: ['email.sent'] } as any)).id;
      ids.domain = data(await a.domains.create({ name: 'a-matrix.example' })).id;
      ids.email = data(
        await a.emails.send({
          from: 'A <a@a-matrix.example>',
          to: 'reader@example.com',
          subject: 'A matrix',
          html: '<p>A</p>',
          attachments: [{ filename: 'a.txt', content: Buffer.from('A').toString('base64') }],
        }),
      ).id;
      ids.contact = data(await a.contacts.create({ email: 'a-matrix@example.com' })).id;
      ids.segment = data(await a.segments.create({ name: 'A matrix' })).id;
      ids.topic = data(await a.topics.create({ name: 'A matrix', defaultSubscription: 'opt_in' } as any)).id;
      ids.property = data(await a.contactProperties.create({ key: 'a_matrix', type: 'string' } as any)).id;
      ids.template = data(await a.templates.create({ name: 'A matrix', html: '<p>A</p>' } as any)).id;
      ids.broadcast = data(await a.broadcasts.create({ segmentId: ids.segment, from: 'A <a@a-matrix.example>', subject: 'A', html: '<p>A</p>' } as any)).id;
      ids.apiKey = data(await a.apiKeys.create({ name: 'A matrix' })).id;
      ids.suppression = data(await a.suppressions.add({ email: 'a-suppressed@example.com' } as any)).id;
      ids.event = data(await a.events.create({ name: 'a.matrix' } as any)).id;
      ids.automation = data(
        await a.automations.create({ name: 'A matrix', steps: [{ key: 'start', type: 'trigger', config: { eventName: 'a.matrix' } }], connections: [] } as any),
      ).id;
      const attachments = (await (await t.fetch(`/emails/${ids.email}/attachments`)).json()) as { data: { id: string }[] };
      ids.attachment = attachments.data[0]!.id;
      ids.log = data(await a.logs.list()).data[0]!.id;
      await eventually(async () => receiver.received.length > 0);
      const deliveries = (await (await t.fetch(`/webhooks/${ids.webhook}/events`)).json()) as { data: { id: string }[] };
      ids.webhookEvent = deliveries.data[0]!.id;
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    const apiRoutes = () => t.app.routeTable.filter((route) => !['public', 'dashboard', 'admin'].includes(route.access) && route.method !== 'HEAD');
    const call = (token: string, method: string, path: string) =>
      fetch(`${t.url}${path}`, {
        method,
        redirect: 'manual',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: ['GET', 'DELETE'].includes(method) ? undefined : '{}',
      });

    // First, while B's own request logs name none of A's ids (B's calls below do: they are B's to see).
    it("lists and counts nothing of A's through B's key", async () => {
      const aIds = Object.values(ids);
      const leaks: string[] = [];
      for (const route of apiRoutes().filter((r) => r.method === 'GET' && !plain(r.url).includes(':'))) {
        const response = await call(p.bToken, 'GET', plain(route.url));
        const text = await response.text();
        if (aIds.some((id) => text.includes(id)) || /a-matrix/.test(text)) leaks.push(`GET ${plain(route.url)} with B's key names A's rows: ${text.slice(0, 300)}`);
      }
      assert.equal(leaks.length, 0, leaks.join('\n'));
    });

    it("answers B's key for an id of A's exactly as for a missing id, on every route", async () => {
      let checked = 0;
      const leaks: string[] = [];
      for (const route of apiRoutes()) {
        const path = plain(route.url);
        const foreign = withIds(path, ids);
        const missing = path.replace(/:[A-Za-z_]+/g, MISSING_ID);
        if (foreign === missing) continue;
        const seen = [...Object.values(ids), MISSING_ID];
        const missingAnswer = await answerOf(await call(p.bToken, route.method, missing), seen);
        const foreignAnswer = await answerOf(await call(p.bToken, route.method, foreign), seen);
        const what = `${route.method} ${foreign} with B's key answered ${foreignAnswer.status} ${foreignAnswer.text.slice(0, 200)}; a missing id ${missingAnswer.status} ${missingAnswer.text.slice(0, 200)}`;
        const same = [foreignAnswer.status, foreignAnswer.name, foreignAnswer.message].join() === [missingAnswer.status, missingAnswer.name, missingAnswer.message].join();
        // A success (DELETE of a missing contact answers deleted, as Resend does) must say the same too.
        if (!same || (foreignAnswer.status < 300 && foreignAnswer.blind !== missingAnswer.blind)) leaks.push(what);
        checked++;
      }
      assert.equal(leaks.length, 0, leaks.join('\n'));
      assert.ok(checked > 80, `${checked} routes checked`);
    });

    it("answers B's dashboard session for an id of A's exactly as for a missing id, on every page and form", async () => {
      const session = cookiesOf(await signIn(t, p.bToken));
      const csrf = csrfField(await (await fetch(`${t.url}/dashboard/emails`, { headers: { cookie: session } })).text());
      const open = (method: string, path: string) =>
        fetch(`${t.url}${path}`, {
          method,
          redirect: 'manual',
          headers: { cookie: session, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
          body: method === 'POST' ? new URLSearchParams({ _csrf: csrf }).toString() : undefined,
        });
      let checked = 0;
      const leaks: string[] = [];
      for (const route of t.app.routeTable.filter((r) => r.access === 'dashboard' && r.method !== 'HEAD' && r.url.includes(':'))) {
        const path = plain(route.url);
        const foreign = withIds(path, ids);
        const missing = path.replace(/:[A-Za-z_]+/g, MISSING_ID);
        if (foreign === missing) continue;
        const missingStatus = (await open(route.method, missing)).status;
        const response = await open(route.method, foreign);
        const text = await response.text();
        if (response.status !== missingStatus) leaks.push(`${route.method} ${foreign} in B's session answered ${response.status} ${text.slice(0, 200)}; a missing id ${missingStatus}`);
        checked++;
      }
      assert.equal(leaks.length, 0, leaks.join('\n'));
      assert.ok(checked > 30, `${checked} pages checked`);
    });

    it("leaves every row of A's as it was", async () => {
      const gone: string[] = [];
      for (const [resource, path] of Object.entries({
        domain: `/domains/${ids.domain}`,
        email: `/emails/${ids.email}`,
        contact: `/contacts/${ids.contact}`,
        segment: `/segments/${ids.segment}`,
        topic: `/topics/${ids.topic}`,
        property: `/contact-properties/${ids.property}`,
        template: `/templates/${ids.template}`,
        broadcast: `/broadcasts/${ids.broadcast}`,
        webhook: `/webhooks/${ids.webhook}`,
        suppression: `/suppressions/${ids.suppression}`,
        event: `/events/${ids.event}`,
        automation: `/automations/${ids.automation}`,
      })) {
        const response = await t.fetch(path);
        if (response.status !== 200) gone.push(`A's ${resource}: ${await response.text()}`);
      }
      assert.equal(gone.length, 0, gone.join('\n'));
      const keys = (await p.a.apiKeys.list()).data!.data.map((key) => key.id);
      assert.ok(keys.includes(ids.apiKey!), "A's key is still there");
    });
  });
}
