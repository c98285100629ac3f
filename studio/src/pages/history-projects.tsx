import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { useAction } from '../components/use-action.js';
import { href } from '../router.js';
import type { Project } from '../types.js';

/** The organization's projects: make one, and open the history filtered to one. */
export function Projects({ projects, onCreated }: { projects: Project[] | null; onCreated: () => unknown }) {
  const [name, setName] = useState('');
  const { busy, error, run } = useAction();
  const [made, setMade] = useState<string>('');

  const create = (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return;
    void run(async () => {
      const p = await api<Project>('POST', '/v2/projects', { name: name.trim() });
      setMade(`Project “${p.name}” created.`);
      setName('');
      await onCreated();
    });
  };

  return (
    <>
      <form class="card inline-form" onSubmit={create} aria-labelledby="new-project-title">
        <h2 id="new-project-title">New project</h2>
        <label>
          Project name
          <input value={name} maxLength={200} required onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy || !name.trim()}>
          {busy ? 'Creating…' : 'Create project'}
        </button>
        <ErrorMessage error={error} />
        <p role="status" class="muted">
          {made}
        </p>
      </form>
      <h2>Projects</h2>
      {projects === null ? (
        <p>Loading…</p>
      ) : projects.length === 0 ? (
        <p>No projects yet. A generation joins a project when it is made with the project’s id.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Generations</th>
            </tr>
          </thead>
          <tbody>
            {projects.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td>
                <td>{new Date(p.createdAt).toLocaleString()}</td>
                <td>
                  <a href={href(`history?project=${encodeURIComponent(p.id)}`)}>
                    See the generations<span class="sr-only"> of {p.name}</span>
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
