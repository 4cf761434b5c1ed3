// A local SMTP sink that accepts everything and counts, run as its own process so that it never
// competes with the sender for an event loop. The parent asks for the count over IPC. With
// `--delay <least>-<most>` (ms) it answers each message's DATA that much later, spread over the
// range by a fixed sequence: the latency of servers on the internet, the same in every run.
import { SMTPServer } from 'smtp-server';

const [least, most] = process.argv[2] === '--delay' ? process.argv[3]!.split('-').map(Number) as [number, number] : [0, 0];
let count = 0;
let answered = 0;
/** The i-th message's delay: a multiplicative hash of i, spread evenly over least..most. */
const delayOf = (i: number) => least + (Math.imul(i + 1, 2654435761) >>> 0) % (most - least + 1);

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      const answer = () => {
        count++;
        callback();
      };
      if (most > 0) setTimeout(answer, delayOf(answered++));
      else answer();
    });
  },
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.server.address() as { port: number };
  process.send!({ port });
});
process.on('message', (message: string) => {
  if (message === 'count') process.send!({ count });
  if (message === 'reset') count = 0;
});
process.on('disconnect', () => process.exit(0));
