// U+0000 (NUL) in client text: PostgreSQL cannot store it in a text column (the query fails, a 500
// or a whole batch lost) and no field of this API has a use for it. One walk finds it in any parsed
// value, for the request guard (http/nul-guard.ts) and for each record of a batch file alike.

/** The field path of the first string (or property name) holding NUL, or null when there is none. */
export function findNul(value: unknown, root = ''): string | null {
  // Iterative, so that a deeply nested JSON body cannot overflow the stack.
  const stack: { value: unknown; path: string }[] = [{ value, path: root }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop() as { value: unknown; path: string };
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${path}[${i}]` });
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
      const entries = Object.entries(v as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i] as [string, unknown];
        const childPath = path === '' ? k : `${path}.${k}`;
        if (k.includes('\u0000')) return childPath.replaceAll('\u0000', '\\u0000');
        stack.push({ value: child, path: childPath });
      }
    }
  }
  return null;
}

/** The message of a NUL refusal, the same wherever it is found. */
export const nulMessage = (field: string): string => `${field} must not contain the NUL character (U+0000).`;
