import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Context } from './context.ts';
import { dashboardRoutes } from './dashboard/index.ts';
import { recordApiLogs } from './http/api-logs.ts';
import { sharedEmailRoutes } from './dashboard/shared-email.ts';
import { authenticate, type Access } from './http/auth.ts';
import { clientLimits } from './http/client-limits.ts';
import { handleError } from './http/error-handler.ts';
import { hashBodyIfIdempotent } from './http/idempotency-key.ts';
import { limitLargeBodies } from './http/large-bodies.ts';
import { shedLoad } from './http/load-shedding.ts';
import { limitRequestRates } from './http/rate-limit.ts';
import { notFoundHandler } from './http/not-found.ts';
import { describeRoutes } from './http/openapi.ts';
import { logRequest } from './http/request-log.ts';
import { countRequests } from './http/request-metrics.ts';
import { apiKeyRoutes } from './http/routes/api-keys.ts';
import { audienceContactRoutes } from './http/routes/audience-contacts.ts';
import { batchRoutes } from './http/routes/batch.ts';
import { broadcastReportRoutes } from './http/routes/broadcast-reports.ts';
import { broadcastRoutes } from './http/routes/broadcasts.ts';
import { contactImportRoutes } from './http/routes/contact-imports.ts';
import { contactPropertyRoutes } from './http/routes/contact-properties.ts';
import { contactSegmentRoutes } from './http/routes/contact-segments.ts';
import { contactTopicRoutes } from './http/routes/contact-topics.ts';
import { contactRoutes } from './http/routes/contacts.ts';
import { domainRoutes } from './http/routes/domains.ts';
import { domainDeliverabilityRoutes } from './http/routes/domain-deliverability.ts';
import { dmarcReportRoutes } from './http/routes/dmarc-reports.ts';
import { mtaStsRoutes } from './http/routes/mta-sts.ts';
import { downloadRoutes } from './http/routes/downloads.ts';
import { emailAttachmentRoutes } from './http/routes/email-attachments.ts';
import { emailMetricsRoutes } from './http/routes/email-metrics.ts';
import { emailShareRoutes } from './http/routes/email-shares.ts';
import { feedbackRoutes } from './http/routes/feedback.ts';
import { receivingRoutes } from './http/routes/receiving.ts';
import { emailRoutes } from './http/routes/emails.ts';
import { logRoutes } from './http/routes/logs.ts';
import { segmentRoutes } from './http/routes/segments.ts';
import { suppressionRoutes } from './http/routes/suppressions.ts';
import { customEventRoutes } from './http/routes/custom-events.ts';
import { automationRoutes } from './http/routes/automations.ts';
import { topicRoutes } from './http/routes/topics.ts';
import { systemRoutes } from './http/routes/system.ts';
import { templateRoutes } from './http/routes/templates.ts';
import { trackingDomainRoutes } from './http/routes/tracking-domains.ts';
import { trackingRoutes } from './http/routes/tracking.ts';
import { unsubscribeRoutes } from './http/routes/unsubscribe.ts';
import { usageRoutes } from './http/routes/usage.ts';
import { projectRoutes } from './http/routes/projects.ts';
import { webhookEventRoutes } from './http/routes/webhook-events.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';

/** A route as registered, with who may call it. */
export interface RouteEntry {
  method: string;
  url: string;
  access: Access;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the app serves (HEAD ones too), read by the authorization test over all routes. */
    routeTable: RouteEntry[];
  }
}

export type App = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** The HTTP API as a function of the context: no port, no process concerns. */
export async function buildApp(ctx: Context): Promise<App> {
  const logger: FastifyBaseLogger = ctx.log;
  const app: App = Fastify({
    loggerInstance: logger,
    // Fastify's two lines per request are replaced by one of our own (http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // Most routes take small JSON; those that take more say so (docs/api.md lists them).
    bodyLimit: 1024 * 1024,
    // A client has this long to send its request, and a connection may sit idle a minute: a client
    // trickling a body cannot hold a connection (and its buffers) for long.
    requestTimeout: ctx.config.http.requestTimeoutMs,
    connectionTimeout: 60_000,
    // Node looks for requests past their timeout this often (30 s by default).
    http: { connectionsCheckingInterval: 1000 },
    // Path parameters hold unsubscribe tokens (about 160 characters) and email addresses (up to 254).
    routerOptions: { maxParamLength: 512 },
    // Request ids need not sort by time as entity ids do: randomUUID is the cheaper UUID.
    genReqId: () => randomUUID(),
    // request.ip, the address per-client limits and tracking events use (MAILROOM_TRUST_PROXY).
    trustProxy: ctx.config.http.trustProxy,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, verbose: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('apiKey', null);
  app.decorateRequest('bodyHash', undefined);
  app.decorateRequest('bodyText', undefined);
  app.decorateRequest('overLimit', false);

  // The API reads JSON only (Fastify would read text/plain too): any other body is refused with 415,
  // naming the Content-Type to send. The routes that take forms add their parsers in their own scope.
  // The Resend SDK sends `Content-Type: application/json` with no body on action routes
  // (cancel, verify, publish...): an empty body reads as {}.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    hashBodyIfIdempotent(request, text);
    request.bodyText = text;
    void parseJson(request, text, done);
  });

  await describeRoutes(app, ctx.config.publicUrl);
  app.decorate('routeTable', []);
  app.addHook('onRoute', (route) => {
    const access = route.config?.access ?? 'full';
    for (const method of [route.method].flat()) app.routeTable.push({ method, url: route.url, access });
  });

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // First of the hooks that decide: a request shed costs no authentication, no body, no database.
  await shedLoad(app);
  const limits = clientLimits(ctx);
  app.decorate('clientLimits', limits);
  if (limits.limitPublicRoutes) app.addHook('onRequest', limits.limitPublicRoutes);
  app.addHook('onRequest', authenticate(ctx, limits));
  app.addHook('onRequest', await limitRequestRates(app, ctx));
  app.addHook('onRequest', limitLargeBodies(ctx.config.http.maxLargeBodies));
  app.addHook('onResponse', logRequest);
  app.addHook('onResponse', countRequests(ctx.instruments));
  recordApiLogs(app, ctx);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(notFoundHandler(app));

  systemRoutes(app, ctx);
  apiKeyRoutes(app, ctx);
  projectRoutes(app, ctx);
  emailRoutes(app, ctx);
  emailMetricsRoutes(app, ctx);
  emailAttachmentRoutes(app, ctx);
  emailShareRoutes(app, ctx);
  receivingRoutes(app, ctx);
  batchRoutes(app, ctx);
  templateRoutes(app, ctx);
  contactRoutes(app, ctx);
  contactImportRoutes(app, ctx);
  contactSegmentRoutes(app, ctx);
  contactTopicRoutes(app, ctx);
  segmentRoutes(app, ctx);
  audienceContactRoutes(app, ctx);
  topicRoutes(app, ctx);
  contactPropertyRoutes(app, ctx);
  domainRoutes(app, ctx);
  trackingDomainRoutes(app, ctx);
  domainDeliverabilityRoutes(app, ctx);
  dmarcReportRoutes(app, ctx);
  mtaStsRoutes(app, ctx);
  broadcastRoutes(app, ctx);
  broadcastReportRoutes(app, ctx);
  usageRoutes(app, ctx);
  webhookRoutes(app, ctx);
  unsubscribeRoutes(app, ctx);
  downloadRoutes(app, ctx);
  trackingRoutes(app, ctx);
  webhookEventRoutes(app, ctx);
  feedbackRoutes(app, ctx);
  suppressionRoutes(app, ctx);
  logRoutes(app, ctx);
  customEventRoutes(app, ctx);
  automationRoutes(app, ctx);
  dashboardRoutes(app, ctx);
  sharedEmailRoutes(app, ctx);

  return app;
}
