// The baseline server: a bare Fastify 5 app with one route that returns a small JSON object, started
// in its own process exactly like the service processes (same runtime flags, same IPC protocol).
import Fastify from 'fastify';
import type { Ready, Reply, Request } from './protocol.js';

const app = Fastify({ logger: false });
app.get('/bare/:id', async (request) => {
  const { id } = request.params as { id: string };
  return { id, status: 'COMPLETED', model: 'lipsync-2', outputUrl: null };
});

const url = await app.listen({ host: '127.0.0.1', port: 0 });

const send = (m: Ready | Reply) => process.send?.(m);
process.on('message', (m: Request) => {
  if (m?.type !== 'request') return;
  if (m.command.cmd === 'stop') {
    void app.close().then(() => {
      send({ type: 'reply', id: m.id, ok: true, result: null });
      process.disconnect();
    });
    return;
  }
  if (m.command.cmd === 'stats') {
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    send({
      type: 'reply',
      id: m.id,
      ok: true,
      result: { ...mem, cpuUserUs: cpu.user, cpuSystemUs: cpu.system, waiters: 0 },
    });
    return;
  }
  send({ type: 'reply', id: m.id, ok: false, error: `the bare server does not do ${m.command.cmd}` });
});
process.on('disconnect', () => void app.close().then(() => process.exit(0)));

send({
  type: 'ready',
  pid: process.pid,
  url,
  apiKey: null,
  organizationId: null,
  apiKeyId: null,
  database: null,
});
