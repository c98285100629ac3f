// The one error of the guarded outgoing HTTP client. `message` is short and written for users (it may
// reach an API answer or a webhook attempt log): it never names a resolved address, a resolver's or
// socket's own text, a stack or a path. `detail` carries that for the server log.

export type OutgoingFailure =
  /** The URL does not parse or has no host. */
  | 'invalid_url'
  /** Not http: or https:. */
  | 'scheme'
  /** A port that is never connected to (see isRefusedPort). */
  | 'port'
  /** The host is, or resolves to, an address the policy refuses. */
  | 'blocked_address'
  /** The host name has no address (or the resolver failed). */
  | 'unresolvable'
  | 'timeout'
  /** The answer is larger than the caller's limit (declared or streamed). */
  | 'too_large'
  /** Set by callers that need a 2xx answer (fetchToFile). */
  | 'http_status'
  | 'too_many_redirects'
  /** Connection refused or reset, TLS failure, a dropped body. */
  | 'network'
  /** The caller's signal aborted the request. */
  | 'aborted';

/** Failures that every retry of the same URL would meet again (the URL itself is refused). */
const REFUSALS: ReadonlySet<OutgoingFailure> = new Set(['invalid_url', 'scheme', 'port', 'blocked_address']);

export class OutgoingRequestError extends Error {
  /** For the log only: what exactly happened (resolved addresses, socket error codes). */
  readonly detail: string;
  readonly status?: number;

  constructor(
    readonly reason: OutgoingFailure,
    message: string,
    extra: { status?: number; detail?: string } = {},
  ) {
    super(message);
    this.name = 'OutgoingRequestError';
    this.status = extra.status;
    this.detail = extra.detail ?? message;
  }

  /** True when the URL is refused by the policy, so retrying it later cannot succeed. */
  get refused(): boolean {
    return REFUSALS.has(this.reason);
  }
}

function codeOf(err: unknown): string {
  const e = err as { code?: unknown } | null;
  return typeof e?.code === 'string' ? e.code : '';
}

/** The user-facing text for a socket or TLS failure; the code and message go to `detail`. */
export function networkError(err: unknown): OutgoingRequestError {
  const code = codeOf(err);
  const raw = err instanceof Error ? err.message : String(err);
  let message = 'the connection failed';
  if (code === 'ECONNREFUSED') message = 'the server refused the connection';
  else if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE')
    message = 'the server closed the connection early';
  else if (['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN'].includes(code))
    message = 'the server could not be reached';
  else if (
    /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(code) ||
    /certificate|ssl|tls/i.test(raw)
  )
    message = "the server's TLS certificate or handshake could not be verified";
  else if (code === 'HPE_INVALID_CONSTANT' || code.startsWith('HPE_'))
    message = 'the server sent an invalid HTTP answer';
  return new OutgoingRequestError('network', message, { detail: code ? `${code}: ${raw}` : raw });
}
