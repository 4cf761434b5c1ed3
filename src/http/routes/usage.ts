import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { getUsage } from '../../domain/metrics/usage.ts';
import { Nullable } from '../schemas/common.ts';

const Period = Type.Object({ used: Type.Integer(), limit: Type.Null(), sent: Type.Integer(), received: Type.Integer(), resets_at: Type.String() });
const Count = Type.Object({ used: Type.Integer(), limit: Type.Null() });

const Usage = Type.Object({
  object: Type.Literal('usage'),
  emails: Type.Object({ daily: Period, monthly: Period }),
  contacts: Count,
  segments: Count,
  broadcasts: Count,
  ai_credits: Type.Object({ used: Type.Integer(), limit: Type.Null(), next_increase_at: Nullable(Type.String()) }),
  automation_runs: Type.Object({ used: Type.Integer(), limit: Type.Null(), resets_at: Type.String() }),
  domains: Count,
  rate_limit: Type.Object({ limit: Nullable(Type.Integer({ description: "The calling key's requests per second; null: no limit" })), duration: Type.String() }),
});

export function usageRoutes(app: App, ctx: Context): void {
  app.get(
    '/usage',
    {
      schema: {
        summary: "Today's and this month's emails (UTC), how many contacts, segments, broadcasts and domains, and the calling key's rate limit",
        response: { 200: Usage },
      },
    },
    async (request) => getUsage(ctx, request.apiKey!),
  );
}
