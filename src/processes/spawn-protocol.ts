// The messages between a process and its spawn helper (spawn-helper.ts), over Node's IPC channel with
// `advanced` serialization (byte arrays travel as such, not as JSON). A child's stdin pipe itself is
// handed over ('stdin', with the socket as the message's handle): the caller writes straight into it.

/** stdin: read from that FIFO (the caller holds its write end); stdout: write into it. */
export interface FifoStdio {
  fifo: string;
}
export type StdioRequest = 'ignore' | 'pipe' | FifoStdio;

export type ToHelper =
  | {
      t: 'spawn';
      id: number;
      cmd: string;
      args: readonly string[];
      cwd?: string;
      env: NodeJS.ProcessEnv;
      stdin: StdioRequest;
      stdout: StdioRequest;
      stderr: 'ignore' | 'pipe';
    }
  | { t: 'kill'; id: number; signal: NodeJS.Signals };

export type FromHelper =
  | { t: 'ready' }
  | { t: 'stdin'; id: number }
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'error'; id: number; message: string; code?: string }
  | { t: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };
