// A plain node:http GET on a keep-alive agent, with the moment the whole response had arrived.
import http from 'node:http';
import { wallNow } from './stats.js';

export interface GetResult {
  status: number;
  body: string;
  /** wallNow() when the request was handed to the agent. */
  sentAt: number;
  /** wallNow() when the last byte of the body had arrived. */
  doneAt: number;
}

/** Keep-alive sockets, as many as `sockets`, all kept open between requests. */
export function keepAliveAgent(sockets: number): http.Agent {
  return new http.Agent({
    keepAlive: true,
    maxSockets: sockets,
    maxFreeSockets: sockets,
    scheduling: 'fifo',
  });
}

export function get(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
  timeoutMs = 30_000,
): Promise<GetResult> {
  return new Promise((resolve, reject) => {
    const sentAt = wallNow();
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const doneAt = wallNow();
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          sentAt,
          doneAt,
        });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms: GET ${url}`)));
    req.on('error', reject);
  });
}
