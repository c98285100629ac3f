import { useState } from 'preact/hooks';

/**
 * One user action at a time (a form's submit, a button's request): `run(work)` marks it busy, clears
 * the last error, and keeps what `work` throws as `error` for <ErrorMessage> (resolving to false).
 * `doing` names what is running where one page has several actions sharing the busy state.
 */
export function useAction<Doing extends string = string>() {
  const [doing, setDoing] = useState<Doing | '' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (work: () => Promise<unknown>, what: Doing | '' = ''): Promise<boolean> => {
    setDoing(what);
    setError(null);
    try {
      await work();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setDoing(null);
    }
  };
  return { busy: doing !== null, doing, error, setError, run };
}
