import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as tracking from '../../domain/sending-domains/tracking-domains.ts';
import { listOf } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { deleted, IdParams, listOfSchema, MAX, objectId, Str, UUID } from '../schemas/common.ts';

// Resend's tracking domains: a domain's tracking subdomain, the origin of its tracked links once its
// CNAME is verified (docs/tracking.md).

const TrackingParams = Type.Object({ id: Str(MAX.id), tracking_id: Str(MAX.id) });
const SubdomainBody = (required: boolean) => {
  const field = Str(MAX.short, 'A subdomain of the domain, such as "links": its CNAME names the host of MAILROOM_PUBLIC_URL');
  return Type.Object({ subdomain: required ? field : Type.Optional(field) });
};

const TrackingDomain = Type.Object({
  object: Type.Literal('tracking_domain'),
  id: Type.String(),
  name: Type.String({ description: 'The subdomain: "links"' }),
  full_name: Type.String({ description: 'links.example.com' }),
  status: Type.String({ description: 'pending, verified (tracked links use it) or failed (the domain’s checks ended without it)' }),
  records: Type.Array(Type.Object({ type: Type.String(), name: Type.String(), value: Type.String(), status: Type.String() })),
  created_at: Type.String(),
});

const path = `/domains/:id${UUID}/tracking`;
const one = `${path}/:tracking_id${UUID}`;

export function trackingDomainRoutes(app: App, ctx: Context): void {
  app.post(
    path,
    { schema: { summary: "Set a domain's tracking subdomain (one per domain)", params: IdParams, body: SubdomainBody(true), response: { 201: TrackingDomain } } },
    async (request, reply) => reply.status(201).send(await tracking.createTrackingDomain(ctx, projectOf(request), request.params.id, request.body)),
  );

  app.get(
    path,
    { schema: { summary: "List a domain's tracking domains: its one, or none", params: IdParams, response: { 200: listOfSchema(TrackingDomain) } } },
    async (request) => listOf(await tracking.listTrackingDomains(ctx, projectOf(request), request.params.id)),
  );

  app.get(
    one,
    { schema: { summary: 'Retrieve a tracking domain with its CNAME record and status', params: TrackingParams, response: { 200: TrackingDomain } } },
    async (request) => tracking.getTrackingDomain(ctx, projectOf(request), request.params.id, request.params.tracking_id),
  );

  app.patch(
    one,
    {
      schema: {
        summary: 'Change the tracking subdomain (the same id); its CNAME is looked up anew, and links already sent keep the old name',
        params: TrackingParams,
        body: SubdomainBody(false),
        response: { 200: TrackingDomain },
      },
    },
    async (request) => tracking.updateTrackingDomain(ctx, projectOf(request), request.params.id, request.params.tracking_id, request.body),
  );

  app.delete(
    one,
    { schema: { summary: 'Remove the tracking subdomain: new mail is tracked at MAILROOM_PUBLIC_URL', params: TrackingParams, response: { 200: deleted('tracking_domain') } } },
    async (request) => tracking.deleteTrackingDomain(ctx, projectOf(request), request.params.id, request.params.tracking_id),
  );

  app.post(
    `${one}/verify`,
    { schema: { summary: "Look the domain's records up now, this CNAME among them", params: TrackingParams, response: { 200: objectId('tracking_domain') } } },
    async (request) => tracking.verifyTrackingDomain(ctx, projectOf(request), request.params.id, request.params.tracking_id),
  );
}
