// The ceiling for the receiving benchmark: a bare smtp-server that takes every message and discards
// it, in its own process like Mailroom, with the options Mailroom's inbound server uses.
import { SMTPServer } from 'smtp-server';

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  disableReverseLookup: true,
  logger: false,
  size: 40 * 1024 * 1024,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => callback(null, '2.0.0 OK'));
  },
});
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.server.address() as { port: number }).port });
});
process.on('disconnect', () => process.exit(0));
