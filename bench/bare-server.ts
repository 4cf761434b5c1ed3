// The ceiling for the API benchmark: a bare Fastify route that parses the same JSON body and answers
// {id}, nothing else, in its own process like Mailroom.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const app = Fastify({ bodyLimit: 41 * 1024 * 1024 });
app.post('/emails', async () => ({ id: randomUUID() }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.send!({ address });
process.on('disconnect', () => process.exit(0));
