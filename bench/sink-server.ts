// A local SMTP sink that accepts everything and counts, run as its own process so that it never
// competes with the sender for an event loop. The parent asks for the count over IPC.
import { SMTPServer } from 'smtp-server';

let count = 0;
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      count++;
      callback();
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
