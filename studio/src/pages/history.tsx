import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { href, type Route } from '../router.js';
import type { Generation } from '../types.js';

/** Past generations, newest first. */
export function History(_props: { route: Route }) {
  const [items, setItems] = useState<Generation[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<Generation[]>('/v2/generations?limit=50').then(setItems, setError);
  }, []);
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <ErrorMessage error={error} />
      {items === null ? (
        <p>Loading…</p>
      ) : items.length === 0 ? (
        <p>
          No generations yet. <a href={href('')}>Make one</a>.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">Model</th>
            </tr>
          </thead>
          <tbody>
            {items.map((g) => (
              <tr key={g.id}>
                <td>
                  <a href={href(`generations/${g.id}`)}>{new Date(g.createdAt).toLocaleString()}</a>
                </td>
                <td>{g.status}</td>
                <td>{g.model}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
