// Usage periods. Pure; no I/O.

/** The first instant of the UTC calendar month of `now`: usage periods are calendar months. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
