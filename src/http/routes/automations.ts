import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as automations from '../../domain/automations/automations.ts';
import { MAX_STEPS } from '../../domain/automations/graph.ts';
import { getRun, getRunStep, listRuns, listRunSteps } from '../../domain/automations/runs.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { deleted, IdParams, listOfSchema, MAX, Nullable, objectId, Str } from '../schemas/common.ts';

// The graph is checked in the domain (domain/automations/graph.ts), which names the offending step;
// here only its size is bounded.
const Steps = Type.Array(Type.Unknown(), { maxItems: MAX_STEPS, description: '{key, type, config} of each step' });
const Connections = Type.Array(Type.Unknown(), { maxItems: MAX_STEPS * 4, description: '{from, to, type} of each connection' });

const AutomationBody = Type.Object({
  name: Type.Optional(Str(MAX.short)),
  status: Type.Optional(Str(MAX.short, '"enabled" or "disabled" (default on create)')),
  steps: Type.Optional(Steps),
  connections: Type.Optional(Connections),
});

const Times = { created_at: Type.String(), updated_at: Type.String() };
const AutomationItem = Type.Object({ id: Type.String(), name: Type.String(), status: Type.String(), ...Times });

const Step = Type.Object({ key: Type.String(), type: Type.String(), config: Type.Unknown() });
const Connection = Type.Object({ from: Type.String(), to: Type.String(), type: Type.String() });

const RunItem = Type.Object({
  id: Type.String(),
  status: Type.String(),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  created_at: Type.String(),
  contact_id: Type.String(),
  email: Type.String(),
});

const RunStep = Type.Object({
  key: Type.String(),
  type: Type.String(),
  status: Type.String(),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  output: Type.Unknown(),
  error: Type.Unknown(),
  created_at: Type.String(),
});

const RunStepObject = Type.Object({
  object: Type.Literal('automation_run_step'),
  step_id: Type.String({ description: 'The id of this step of the run' }),
  key: Type.String({ description: "Mailroom's addition: the step's key in the automation's graph" }),
  config: Type.Unknown({ description: "The step's config in the version the run follows" }),
  ...Type.Omit(RunStep, ['key']).properties,
});

const StatusQuery = Type.Object({ ...PageQuery.properties, status: Type.Optional(Str(MAX.short)) });
const RunParams = Type.Object({ id: Str(MAX.id), run_id: Str(MAX.id) });
const RunStepParams = Type.Object({ ...RunParams.properties, step_id: Str(MAX.id) });

export function automationRoutes(app: App, ctx: Context): void {
  app.post(
    '/automations',
    { schema: { summary: 'Create an automation', body: AutomationBody, response: { 201: objectId('automation') } } },
    async (request, reply) => reply.status(201).send({ object: 'automation' as const, ...(await automations.createAutomation(ctx, projectOf(request), request.body)) }),
  );

  app.get(
    '/automations',
    { schema: { summary: 'List automations (`status` filters)', querystring: StatusQuery, response: { 200: listOfSchema(AutomationItem) } } },
    async (request) => listOf(await automations.listAutomations(ctx, projectOf(request), parsePage(request.query, { everything: false }), request.query.status)),
  );

  app.get(
    '/automations/:id',
    {
      schema: {
        summary: 'Retrieve an automation with the steps and connections of its current version',
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal('automation'), ...AutomationItem.properties, steps: Type.Array(Step), connections: Type.Array(Connection) }) },
      },
    },
    async (request) => automations.getAutomation(ctx, projectOf(request), request.params.id),
  );

  app.patch(
    '/automations/:id',
    { schema: { summary: 'Update an automation (a new graph is a new version)', params: IdParams, body: AutomationBody, response: { 200: objectId('automation') } } },
    async (request) => ({ object: 'automation' as const, ...(await automations.updateAutomation(ctx, projectOf(request), request.params.id, request.body)) }),
  );

  app.delete(
    '/automations/:id',
    { schema: { summary: 'Delete an automation, cancelling its runs', params: IdParams, response: { 200: deleted('automation') } } },
    async (request) => automations.deleteAutomation(ctx, projectOf(request), request.params.id),
  );

  app.post(
    '/automations/:id/duplicate',
    { schema: { summary: 'Duplicate an automation (disabled)', params: IdParams, response: { 201: objectId('automation') } } },
    async (request, reply) => reply.status(201).send({ object: 'automation' as const, ...(await automations.duplicateAutomation(ctx, projectOf(request), request.params.id)) }),
  );

  app.post(
    '/automations/:id/stop',
    {
      schema: {
        summary: 'Stop an automation: disable it and cancel its runs in progress',
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal('automation'), id: Type.String(), status: Type.String() }) },
      },
    },
    async (request) => automations.stopAutomation(ctx, projectOf(request), request.params.id),
  );

  app.get(
    '/automations/:id/runs',
    { schema: { summary: "List an automation's runs (`status`: one or several, comma-separated)", params: IdParams, querystring: StatusQuery, response: { 200: listOfSchema(RunItem) } } },
    async (request) => listOf(await listRuns(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: false }), request.query.status)),
  );

  app.get(
    '/automations/:id/runs/:run_id',
    {
      schema: {
        summary: 'Retrieve a run with the steps it reached',
        params: RunParams,
        response: {
          200: Type.Object({
            object: Type.Literal('automation_run'),
            ...RunItem.properties,
            automation_id: Type.String(),
            event: Type.Unknown(),
            steps: Type.Array(RunStep),
          }),
        },
      },
    },
    async (request) => getRun(ctx, projectOf(request), request.params.id, request.params.run_id),
  );
  app.get(
    '/automations/:id/runs/:run_id/steps',
    {
      schema: {
        summary: "List a run's steps, newest first (always paginated, 20 by default)",
        params: RunParams,
        querystring: PageQuery,
        response: { 200: listOfSchema(RunStepObject) },
      },
    },
    async (request) => {
      const { id, run_id } = request.params;
      return listOf(await listRunSteps(ctx, projectOf(request), id, run_id, parsePage(request.query, { everything: false })));
    },
  );

  app.get(
    '/automations/:id/runs/:run_id/steps/:step_id',
    { schema: { summary: 'Retrieve a step of a run', params: RunStepParams, response: { 200: RunStepObject } } },
    async (request) => getRunStep(ctx, projectOf(request), request.params.id, request.params.run_id, request.params.step_id),
  );
}
