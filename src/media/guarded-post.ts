// Webhook POSTs on the guarded outgoing client (http-client.ts). Redirects are not followed (a 3xx is
// the answer, and counts as a failed delivery); the receiver's body is not read.
import { guardedRequest, OutgoingRequestError } from './http-client.js';
import type { UrlPolicyOptions } from './url-policy.js';

/** The POST error is the client's error; the old name stays for callers. */
export { OutgoingRequestError as GuardedRequestError };

export interface GuardedPostOptions extends UrlPolicyOptions {
  /** One deadline for resolution, connection and the answer's head. */
  timeoutMs: number;
  signal?: AbortSignal;
  extraCa?: string[];
}

/** POSTs body to url under the outgoing policy; resolves with the HTTP status of the answer. */
export async function guardedPost(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: GuardedPostOptions,
): Promise<number> {
  const res = await guardedRequest({
    ...opts,
    method: 'POST',
    url,
    headers,
    body,
    maxResponseBytes: 1024 * 1024,
    maxRedirects: 0,
  });
  res.close();
  return res.status;
}
