// Runs one parser on one input in a thread of its own, so that a test can give up on a parser that
// backtracks (synchronous code cannot be interrupted on the thread that runs it).
import { parentPort, workerData } from 'node:worker_threads';
import { evaluate, ruleProblem } from '../../src/domain/automations/rules.ts';
import { readReport } from '../../src/domain/bounces/report.ts';
import { withPreviewText } from '../../src/domain/broadcasts/broadcast-render.ts';
import { readRow } from '../../src/domain/contacts/import-rows.ts';
import { splitMessage } from '../../src/domain/emails/header-block.ts';
import { readMessage } from '../../src/domain/receiving/read-message.ts';
import { parseMailbox } from '../../src/domain/recipients/addresses.ts';
import { parseTemplate } from '../../src/domain/templates/render-template.ts';
import { rewriteHtml } from '../../src/domain/tracking/html-rewriter.ts';
import type { ImportPlan } from '../../src/store/contact-imports.ts';

export type Parser = 'mailbox' | 'template' | 'preview' | 'report' | 'csv-number' | 'html-links' | 'rule' | 'header-block' | 'message';

const message = (error: unknown) => (error as Error).message.slice(0, 100);

const numberPlan = { columns: { email: 0 }, properties: [{ id: 'p', type: 'number', column: 1 }] } as unknown as ImportPlan;
const noDns = async () => {
  throw Object.assign(new Error('no DNS here'), { code: 'ENOTFOUND' });
};

const parsers: Record<Parser, (input: string) => unknown> = {
  mailbox: (input) => {
    try {
      return parseMailbox(input, 'from').address;
    } catch (error) {
      return message(error);
    }
  },
  template: (input) => parseTemplate(input).placeholders.length,
  preview: (input) => withPreviewText(input, 'Preview').length,
  report: (input) => readReport(Buffer.from(input)) ?? null,
  'csv-number': (input) => readRow(['a@example.com', input], numberPlan) ?? null,
  'html-links': (input) => rewriteHtml(input, { link: (href) => `https://t.test/${href.length}` }).length,
  rule: (input) => {
    const rule = JSON.parse(input);
    return ruleProblem(rule, 'rule')?.slice(0, 100) ?? evaluate(rule, { event: { at: rule.value }, contact: undefined });
  },
  'header-block': (input) => splitMessage(Buffer.from(input)).fields.length,
  message: (input) =>
    readMessage(Buffer.from(input), { from: 'a@sender.test', to: ['b@inbox.test'], clientAddress: '192.0.2.1', helo: 'sender.test' }, noDns, 'mx.test').then(
      (read) => ({ from: read.from, subject: read.subject.length, report: read.report?.kind ?? null }),
      message,
    ),
};

const { parser, input } = workerData as { parser: Parser; input: string };
parentPort!.postMessage(await parsers[parser](input));
