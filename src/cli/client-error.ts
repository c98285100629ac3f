// The error of the client commands, apart so that every module of the CLI can throw it.

/**
 * A failure the command reports on stderr ("lipsync: message") and exits with: 1 for what went wrong
 * at the server or with files, 2 for bad usage. `details` go into its --json object.
 */
export class ClientError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly exitCode: 1 | 2 | 3 = 1,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new ClientError(message, {}, 2);
