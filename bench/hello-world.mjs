// The baseline for `npm run bench`: a bare Fastify server, defaults only, no logger.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

const close = () => app.close().then(() => process.exit(0));
process.once('SIGTERM', close);
process.once('SIGINT', close);

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
