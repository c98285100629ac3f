import { useEffect, useMemo, useState } from 'preact/hooks';
import { get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { href, navigate, type Route } from '../router.js';
import { ENDED, type Generation, type Project } from '../types.js';
import { duration, StatusBadge } from './generation-status.js';
import { Projects } from './history-projects.js';

const PAGE = 20;
const STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'REJECTED'];
const STATUS_LABELS: Record<string, string> = {
  PENDING: 'Waiting to start',
  PROCESSING: 'Processing',
  COMPLETED: 'Completed',
  FAILED: 'Failed',
  CANCELED: 'Canceled',
  TIMED_OUT: 'Timed out',
  REJECTED: 'Rejected',
};

/** The hash query with one key changed (empty removes it): filters live there so a reload keeps them. */
function withQuery(query: URLSearchParams, key: string, value: string): string {
  const q = new URLSearchParams(query);
  if (value) q.set(key, value);
  else q.delete(key);
  const s = q.toString();
  return s ? `history?${s}` : 'history';
}

/** Past generations, newest first, filtered by status and project; or the projects (view=projects). */
export function History({ route }: { route: Route }) {
  const view = route.query.get('view') === 'projects' ? 'projects' : 'generations';
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [projectsError, setProjectsError] = useState<unknown>(null);
  const loadProjects = () => get<Project[]>('/v2/projects?limit=100').then(setProjects, setProjectsError);
  useEffect(() => {
    void loadProjects();
  }, []);
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <nav aria-label="History views" class="tabs">
        <a href={href('history')} aria-current={view === 'generations' ? 'page' : undefined}>
          Generations
        </a>
        <a href={href('history?view=projects')} aria-current={view === 'projects' ? 'page' : undefined}>
          Projects
        </a>
      </nav>
      <ErrorMessage error={projectsError} />
      {view === 'projects' ? (
        <Projects projects={projects} onCreated={loadProjects} />
      ) : (
        <Generations route={route} projects={projects ?? []} />
      )}
    </section>
  );
}

function Generations({ route, projects }: { route: Route; projects: Project[] }) {
  const status = route.query.get('status') ?? '';
  const projectId = route.query.get('project') ?? '';
  const [search, setSearch] = useState(route.query.get('q') ?? '');
  const [items, setItems] = useState<Generation[] | null>(null);
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const listPath = (cursor?: string) => {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (status) q.set('status', status);
    if (projectId) q.set('projectId', projectId);
    if (cursor) q.set('cursor', cursor);
    return `/v2/generations?${q}`;
  };
  const load = async (cursor?: string) => {
    setLoading(true);
    setError(null);
    try {
      const page = await get<Generation[]>(listPath(cursor));
      setItems((old) => (cursor && old ? [...old, ...page] : page));
      // A full page may have more behind it; the next (possibly empty) page tells.
      setMore(page.length === PAGE);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    setItems(null);
    void load();
  }, [status, projectId]);

  // Running ones: their progress, read every two seconds until they end.
  const running = (items ?? []).filter((g) => !ENDED.has(g.status)).map((g) => g.id);
  const runningKey = running.join(',');
  useEffect(() => {
    if (running.length === 0) return;
    const read = () => {
      for (const id of running.slice(0, 20)) {
        get<Generation>(`/v2/generate/${encodeURIComponent(id)}?include=progress`).then(
          (g) => setItems((old) => old?.map((x) => (x.id === g.id ? g : x)) ?? old),
          () => undefined, // the next read tries again; the table keeps the last known state
        );
      }
    };
    read();
    const timer = setInterval(read, 2000);
    return () => clearInterval(timer);
  }, [runningKey]);

  const projectName = useMemo(() => new Map(projects.map((p) => [p.id, p.name])), [projects]);
  const needle = search.trim().toLowerCase();
  const shown = (items ?? []).filter(
    (g) =>
      !needle ||
      g.id.toLowerCase().includes(needle) ||
      (g.outputFileName ?? '').toLowerCase().includes(needle),
  );
  const onSearch = (value: string) => {
    setSearch(value);
    // Kept in the address without a new history entry per key stroke.
    history.replaceState(null, '', href(withQuery(route.query, 'q', value.trim())));
  };

  return (
    <>
      <form
        class="filters"
        role="search"
        aria-label="Filter generations"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          Status
          <select
            value={status}
            onChange={(e) => navigate(withQuery(route.query, 'status', e.currentTarget.value))}
          >
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABELS[s]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project
          <select
            value={projectId}
            onChange={(e) => navigate(withQuery(route.query, 'project', e.currentTarget.value))}
          >
            <option value="">Any project</option>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
            {projectId && !projectName.has(projectId) ? <option value={projectId}>{projectId}</option> : null}
          </select>
        </label>
        <label>
          Search by id or file name
          <input
            type="search"
            value={search}
            onInput={(e) => onSearch(e.currentTarget.value)}
            aria-describedby="search-scope"
          />
        </label>
      </form>
      <p id="search-scope" class="muted">
        The search looks through the generations loaded below
        {more ? '; load more to search further back' : ''}.
      </p>
      <ErrorMessage error={error} />
      {items === null ? (
        <p>Loading…</p>
      ) : items.length === 0 ? (
        <p>
          {status || projectId ? 'No generations match these filters.' : 'No generations yet.'}{' '}
          <a href={href('')}>Make one</a>.
        </p>
      ) : (
        <>
          <p class="muted" aria-live="polite">
            Showing {shown.length} of {items.length} loaded generation{items.length === 1 ? '' : 's'}.
          </p>
          <div class="table-scroll">
            <table class="history">
              <caption class="sr-only">Generations, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Model</th>
                  <th scope="col">Project</th>
                  <th scope="col">File name</th>
                  <th scope="col">Id</th>
                  <th scope="col">Duration</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <StatusBadge status={g.status} />
                      {!ENDED.has(g.status) && typeof g.progress_percent === 'number' ? (
                        <span class="row-progress">
                          {' '}
                          <progress
                            max={100}
                            value={g.progress_percent}
                            aria-label={`Progress of generation ${g.id}`}
                          />{' '}
                          {Math.round(g.progress_percent)} %
                        </span>
                      ) : null}
                    </td>
                    <td>
                      <a href={href(`generations/${g.id}`)}>
                        {new Date(g.createdAt).toLocaleString()}
                        <span class="sr-only">, generation {g.id}</span>
                      </a>
                    </td>
                    <td>
                      {g.model}
                      {g.preview ? (
                        <span class="muted"> (preview from {(g.preview.atMs / 1000).toFixed(2)} s)</span>
                      ) : null}
                    </td>
                    <td>{g.projectId ? (projectName.get(g.projectId) ?? g.projectId) : '—'}</td>
                    <td>{g.outputFileName ?? '—'}</td>
                    <td>
                      <code title={g.id}>{g.id.slice(0, 8)}</code>
                    </td>
                    <td>{duration(g.outputDuration)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {more ? (
            <button
              type="button"
              class="secondary more"
              disabled={loading}
              onClick={() => load(items[items.length - 1]?.id)}
            >
              {loading ? 'Loading…' : 'Load more'}
            </button>
          ) : null}
        </>
      )}
    </>
  );
}
