// The admin API, called with the signed-in admin's token. The token lives in sessionStorage
// only (gone when the tab closes), is sent only in the Authorization header, never in a URL.

const TOKEN_KEY = 'storekeeper.admin.token';
const IDENTITY_KEY = 'storekeeper.admin.identity';

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem && (problem.detail || problem.title) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
  get fieldErrors() { return Array.isArray(this.problem.errors) ? this.problem.errors : []; }
  get code() { return this.problem.code; }
}

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  get identity() {
    try { return JSON.parse(sessionStorage.getItem(IDENTITY_KEY) || 'null'); } catch { return null; }
  },
  get canWrite() { return this.identity && this.identity.scope === 'write'; },
  remember(token, identity) {
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(IDENTITY_KEY, JSON.stringify(identity));
  },
  forget() {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(IDENTITY_KEY);
  },
};

let onUnauthorized = () => {};
export function whenUnauthorized(callback) { onUnauthorized = callback; }

/** Calls the admin API; returns {body, etag, status} or throws ApiError (problem+json). */
export async function call(method, path, { body, headers = {}, token = session.token } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, cache: 'no-store',
    credentials: 'omit', redirect: 'error', referrerPolicy: 'no-referrer' };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, { title: 'The server cannot be reached', detail: String(error.message || error) });
  }
  const text = await response.text();
  let parsed = null;
  if (text) {
    try { parsed = JSON.parse(text); } catch { parsed = { detail: text.slice(0, 200) }; }
  }
  if (!response.ok) {
    if (response.status === 401 && token === session.token) onUnauthorized();
    throw new ApiError(response.status, parsed);
  }
  return { body: parsed, etag: response.headers.get('ETag'), status: response.status };
}

export const get = (path) => call('GET', path);

/** `/admin/v1/...` with each path segment encoded. */
export function path(...segments) {
  return '/admin/v1/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

/** A query string from the non-empty entries of `params`. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : '';
}
