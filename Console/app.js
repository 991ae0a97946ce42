// The console's shell: sign-in, navigation between sections (the URL fragment names the
// section), sign-out. Each section renders into <main> from the admin API alone.
import { h, replace, field, notice } from './dom.js';
import { session, call, whenUnauthorized, ApiError } from './api.js';
import { renderCatalog } from './catalog.js';
import { renderOrders, renderOrder } from './orders.js';
import { renderUsers } from './users.js';
import { renderNotifications } from './notifications.js';
import { renderOverview } from './overview.js';
import { renderWebhooks } from './webhooks.js';
import { renderOfferings } from './offerings.js';
import { renderExperiments } from './experiments.js';
import { renderAnalytics } from './analytics.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const sessionBox = document.getElementById('session');

// Section name -> renderer(main, rest of the fragment); each has a link in index.html.
const sections = {
  overview: (view, rest) => renderOverview(view),
  catalog: (view, rest) => renderCatalog(view, rest),
  offerings: (view, rest) => renderOfferings(view),
  experiments: (view, rest) => renderExperiments(view, rest),
  orders: (view, rest) => (rest.length ? renderOrder(view, rest[0]) : renderOrders(view)),
  users: (view, rest) => renderUsers(view, rest[0]),
  notifications: (view, rest) => renderNotifications(view, { consumption: false }),
  consumption: (view, rest) => renderNotifications(view, { consumption: true }),
  webhooks: (view, rest) => renderWebhooks(view),
  analytics: (view, rest) => renderAnalytics(view),
};

function showSignIn(message) {
  nav.hidden = true;
  sessionBox.hidden = true;
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true,
    spellcheck: 'false' });
  const status = h('div', { id: 'sign-in-status' });
  const form = h('form', { class: 'card sign-in', id: 'sign-in', novalidate: true },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Use an admin token from ADMIN_TOKENS. It is kept in this tab only and forgotten when you sign out or close the tab.'),
    field('Admin token', input, 'token'),
    h('button', { type: 'submit' }, 'Sign in'),
    status);
  if (message) status.append(notice(message, 'error'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      replace(status, notice('Enter a token.', 'error'));
      return;
    }
    try {
      const { body } = await call('GET', '/admin/v1/whoami', { token });
      session.remember(token, body);
      input.value = '';
      route();
    } catch (error) {
      const text = error instanceof ApiError && error.status === 401
        ? 'That token is not valid.' : `Sign-in failed: ${error.message}`;
      replace(status, notice(text, 'error'));
      input.focus();
    }
  });
  replace(main, form);
  input.focus();
}

function showShell() {
  nav.hidden = false;
  sessionBox.hidden = false;
  const who = session.identity;
  document.getElementById('who').textContent = `${who.name} (${who.scope === 'write' ? 'can edit' : 'read-only'})`;
  document.body.classList.toggle('read-only', !session.canWrite);
}

// A fragment part as written when it is no valid escape ("%E0"): decodeURIComponent would
// throw before anything renders.
function decodePart(part) {
  try { return decodeURIComponent(part); } catch { return part; }
}

async function route() {
  if (!session.token || !session.identity) {
    showSignIn();
    return;
  }
  showShell();
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodePart);
  const name = sections[parts[0]] ? parts[0] : 'overview';
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === `#/${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // Each visit renders into a view of its own: a slow answer for a section left meanwhile
  // lands in a detached view and never overwrites the section shown now.
  const view = h('div', { class: 'view' }, h('p', { class: 'loading' }, 'Loading…'));
  replace(main, view);
  try {
    await sections[name](view, parts.slice(1));
  } catch (error) {
    replace(view, h('h1', {}, 'Something went wrong'), notice(error.message, 'error'));
  }
  const heading = view.querySelector('h1');
  if (heading && view.isConnected) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  }
}

document.getElementById('sign-out').addEventListener('click', () => {
  session.forget();
  history.replaceState(null, '', location.pathname);
  showSignIn();
});

whenUnauthorized(() => {
  session.forget();
  showSignIn('Your token is no longer accepted; sign in again.');
});

window.addEventListener('hashchange', route);
route();
