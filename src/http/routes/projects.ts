import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as projects from '../../domain/projects/projects.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { deleted, IdParams, listOfSchema, MAX, Nullable, objectId, Str, UUID } from '../schemas/common.ts';

// Mailroom's own routes, beside Resend's: projects, for the admin key alone (docs/projects.md).
const tags = ['Mailroom: projects'];
const config = { access: 'admin' as const };

const Count = (description: string) => Type.Optional(Nullable(Type.Integer({ description })));

const ProjectBody = {
  rate_limit: Count('requests per second for each of its keys without a rate of their own; null: MAILROOM_RATE_LIMIT'),
  daily_quota: Count('emails it may send a UTC day; null: no quota'),
  monthly_quota: Count('emails it may send a UTC month; null: no quota'),
  smtp_url: Type.Optional(Nullable(Str(MAX.url, 'its own relay, smtp:// or smtps://; stored sealed, never shown; null: the install’s transport'))),
};

const Project = Type.Object({
  object: Type.Literal('project'),
  id: Type.String(),
  name: Type.String(),
  rate_limit: Nullable(Type.Integer()),
  daily_quota: Nullable(Type.Integer()),
  monthly_quota: Nullable(Type.Integer()),
  has_smtp_url: Type.Boolean({ description: 'whether it has a relay of its own' }),
  created_at: Type.String(),
});

export function projectRoutes(app: App, ctx: Context): void {
  app.post(
    '/projects',
    {
      config,
      schema: {
        tags,
        summary: 'Create a project and its first full-access key; the token is shown only here',
        body: Type.Object({ name: Str(MAX.short), ...ProjectBody }),
        response: {
          201: Type.Object({
            object: Type.Literal('project'),
            id: Type.String(),
            name: Type.String(),
            api_key: Type.Object({ id: Type.String(), token: Type.String() }),
          }),
        },
      },
    },
    async (request, reply) => reply.status(201).send(await projects.createProject(ctx, request.body)),
  );

  app.get(
    '/projects',
    { config, schema: { tags, summary: 'List projects', querystring: PageQuery, response: { 200: listOfSchema(Project) } } },
    async (request, reply) => replyList(reply, await projects.listProjects(ctx, parsePage(request.query, { everything: true }))),
  );

  app.get(
    `/projects/:id${UUID}`,
    { config, schema: { tags, summary: 'Retrieve a project', params: IdParams, response: { 200: Project } } },
    async (request) => projects.getProject(ctx, request.params.id),
  );

  app.patch(
    `/projects/:id${UUID}`,
    {
      config,
      schema: {
        tags,
        summary: 'Change a project’s name, limits or relay',
        params: IdParams,
        body: Type.Object({ name: Type.Optional(Str(MAX.short)), ...ProjectBody }),
        response: { 200: objectId('project') },
      },
    },
    async (request) => projects.updateProject(ctx, request.params.id, request.body),
  );

  app.delete(
    `/projects/:id${UUID}`,
    {
      config,
      schema: {
        tags,
        summary: 'Delete a project: refused while it has domains or keys, unless force=true removes everything it owns in the background',
        params: IdParams,
        querystring: Type.Object({ force: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: remove its domains, keys and everything else it owns' })) }),
        response: { 200: deleted('project') },
      },
    },
    async (request) => projects.deleteProject(ctx, request.params.id, request.query.force === 'true'),
  );
}
