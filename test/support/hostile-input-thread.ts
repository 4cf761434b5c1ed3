// Runs one parser on one input in a thread of its own, so that a test can give up on a parser that
// backtracks (synchronous code cannot be interrupted on the thread that runs it).
import { parentPort, workerData } from 'node:worker_threads';
import { parseMailbox } from '../../src/domain/recipients/addresses.ts';
import { withPreviewText } from '../../src/domain/broadcasts/broadcast-render.ts';
import { parseTemplate } from '../../src/domain/templates/render-template.ts';

export type Parser = 'mailbox' | 'template' | 'preview';

const parsers: Record<Parser, (input: string) => unknown> = {
  mailbox: (input) => {
    try {
      return parseMailbox(input, 'from').address;
    } catch (error) {
      return (error as Error).message.slice(0, 100);
    }
  },
  template: (input) => parseTemplate(input).placeholders.length,
  preview: (input) => withPreviewText(input, 'Preview').length,
};

const { parser, input } = workerData as { parser: Parser; input: string };
parentPort!.postMessage(parsers[parser](input));
