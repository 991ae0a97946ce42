// Webhooks: the endpoints (and why one is off), their deliveries with every attempt, and for a
// write token: register an endpoint (its secret shown once), switch one off or on, send a test
// event, replay one event. Receivers' answers are shown as text, never as markup.
import { h, replace, field, showFieldErrors, table, notice, facts } from './dom.js';
import { session, call, get, path, query, ApiError } from './api.js';

const STATES = ['', 'pending', 'delivered', 'failed'];
// A pending delivery in the detail is read again this often, at most this many times, so a
// test event's outcome shows up without a manual refresh.
const POLL_MS = 1000;
const POLL_TIMES = 30;

// The last delivery filters, so coming back to the section shows the same list.
let lastFilters = {};

const yesNo = (value) => (value ? 'yes' : 'no');
const problemText = (error, unplaced = []) =>
  error.message + unplaced.map((e) => ` ${e.field}: ${e.message}`).join(';');

/** `message` (a notice) and `secret` (a just-created endpoint's, shown once) come from a write. */
export async function renderWebhooks(view, { message, secret } = {}) {
  const { body } = await get('/admin/v1/webhook-endpoints');
  const ctx = { view, endpoints: body.endpoints, detailToken: 0, listToken: 0 };
  ctx.status = h('div', { id: 'webhook-status' }, message ? notice(message, 'good') : null);
  ctx.results = h('div', { id: 'delivery-results' });
  ctx.detail = h('div', { id: 'delivery-detail' });
  ctx.filters = deliveryFilters(ctx);
  replace(view,
    h('h1', { tabindex: '-1' }, 'Webhooks'),
    secret ? secretCard(secret) : null,
    ctx.status,
    h('h2', {}, 'Endpoints'),
    endpointTable(ctx),
    h('h2', {}, 'Deliveries'),
    ctx.filters.form, ctx.results, ctx.detail,
    session.canWrite ? createForm(ctx) : null,
    session.canWrite ? replayForm(ctx) : null);
  if (secret) view.querySelector('#new-secret-value')?.select();
  await loadDeliveries(ctx, null);
}

const urlOf = (ctx, endpointId) => ctx.endpoints.find((e) => e.id === endpointId)?.url || endpointId;

function endpointTable(ctx) {
  const columns = [
    { label: 'URL', value: (e) => h('code', {}, e.url) },
    { label: 'Event types', value: (e) => e.event_types.join(', ') },
    { label: 'Enabled', value: (e) => yesNo(e.enabled) },
    { label: 'Disabled because', value: (e) => e.disabled_reason || '' },
    { label: 'Failing since', value: (e) => e.failing_since || '' },
    { label: 'Last success', value: (e) => e.last_success_at || '' },
    { label: 'Actions', value: (e) => h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'show-deliveries', 'data-endpoint': e.id,
        'aria-label': `Show deliveries to ${e.url}`, onclick: () => showEndpointDeliveries(ctx, e.id) }, 'Deliveries'),
      session.canWrite ? [
        h('button', { type: 'button', class: 'send-test', 'data-endpoint': e.id, disabled: !e.enabled,
          'aria-label': `Send a test event to ${e.url}`, onclick: () => sendTest(ctx, e) }, 'Send test event'),
        h('button', { type: 'button', class: e.enabled ? 'disable' : 'enable', 'data-endpoint': e.id,
          'aria-label': `${e.enabled ? 'Disable' : 'Enable'} ${e.url}`, onclick: () => setEnabled(ctx, e, !e.enabled) },
        e.enabled ? 'Disable' : 'Enable'),
      ] : null) },
  ];
  const count = ctx.endpoints.length;
  return table(`${count} ${count === 1 ? 'endpoint' : 'endpoints'}, oldest first`, columns, ctx.endpoints, { id: 'webhook-endpoints' });
}

function secretCard(secret) {
  const value = h('input', { type: 'text', readonly: true, value: secret.secret, autocomplete: 'off',
    spellcheck: 'false', class: 'secret', id: 'new-secret-value' });
  const card = h('section', { class: 'card secret-card', id: 'new-secret', 'aria-labelledby': 'new-secret-title' },
    h('h2', { id: 'new-secret-title' }, 'Signing secret — copy it now'),
    notice(`This is the only time the secret of ${secret.url} is shown. Store it with the receiver: it `
      + 'verifies the Storekeeper-Signature header of every delivery. Storekeeper never shows it again; '
      + 'a lost secret needs rotate-secret.', 'error'),
    field('Signing secret', value, 'secret'),
    h('button', { type: 'button', id: 'secret-stored', onclick: () => {
      // The keyboard focus goes back to the section's heading, not to the page's start.
      const heading = card.parentElement?.querySelector('h1');
      card.remove();
      heading?.focus();
    } }, 'I have stored it'));
  return card;
}

function createForm(ctx) {
  const c = {
    url: h('input', { name: 'url', type: 'url', autocomplete: 'off', spellcheck: 'false', required: true,
      maxlength: 2048 }),
    event_types: h('input', { name: 'event_types', autocomplete: 'off', spellcheck: 'false',
      placeholder: '* or order.paid, balance.changed' }),
  };
  const status = h('div', { id: 'endpoint-form-status' });
  const form = h('form', { class: 'card', id: 'endpoint-form', novalidate: true },
    h('h2', {}, 'Register an endpoint'),
    h('p', {}, 'An https URL (plain http only where the server allows insecure URLs). It gets every event '
      + 'inserted from now on whose type it takes (earlier ones: replay). Its signing secret is shown once.'),
    h('div', { class: 'row' }, field('Endpoint URL', c.url, 'url'),
      field('Event types (comma-separated; empty for all)', c.event_types, 'event_types')),
    h('button', { type: 'submit' }, 'Register endpoint'), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const url = c.url.value.trim();
    if (!url) return showFieldErrors(form, [{ field: 'url', message: 'is required' }]);
    const types = c.event_types.value.split(/[\s,]+/).filter(Boolean);
    const body = types.length ? { url, event_types: types } : { url };
    try {
      const { body: created } = await call('POST', '/admin/v1/webhook-endpoints', { body });
      await renderWebhooks(ctx.view, { message: `Registered ${created.url}.`, secret: created });
    } catch (error) {
      const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
      replace(status, notice(problemText(error, unplaced), 'error'));
    }
  });
  return form;
}

function replayForm(ctx) {
  const c = {
    endpoint: h('select', { name: 'endpoint_id' }, ctx.endpoints.map((e) => h('option', { value: e.id }, e.url))),
    event_id: h('input', { name: 'event_id', autocomplete: 'off', spellcheck: 'false', required: true }),
  };
  const status = h('div', { id: 'replay-form-status' });
  const form = h('form', { class: 'card', id: 'replay-form', novalidate: true },
    h('h2', {}, 'Replay an event'),
    h('p', {}, 'Queues one event to an endpoint again, whatever its event types (the receiver deduplicates by Storekeeper-Event-Id).'),
    h('div', { class: 'row' }, field('Endpoint', c.endpoint, 'endpoint_id'), field('Event id', c.event_id, 'event_id')),
    h('button', { type: 'submit', disabled: ctx.endpoints.length === 0 }, 'Replay event'), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const eventId = c.event_id.value.trim();
    if (!eventId) return showFieldErrors(form, [{ field: 'event_id', message: 'is required' }]);
    showFieldErrors(form, []);
    replace(status);
    try {
      await replay(ctx, c.endpoint.value, eventId);
    } catch (error) {
      const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
      replace(status, notice(error.status === 404 && error.code !== 'webhook_endpoint_not_found'
        ? `No event has the id ${eventId}.` : problemText(error, unplaced), 'error'));
    }
  });
  return form;
}

function deliveryFilters(ctx) {
  const c = {
    endpoint_id: h('select', { name: 'endpoint_id' }, h('option', { value: '' }, 'any'),
      ctx.endpoints.map((e) => h('option', { value: e.id }, e.url))),
    state: h('select', { name: 'state' }, STATES.map((s) => h('option', { value: s }, s || 'any'))),
    event_id: h('input', { name: 'event_id', autocomplete: 'off', spellcheck: 'false' }),
  };
  for (const [k, v] of Object.entries(lastFilters)) if (c[k]) c[k].value = v;
  // A remembered endpoint that is gone since falls back to "any".
  if (c.endpoint_id.value !== (lastFilters.endpoint_id || '')) c.endpoint_id.value = '';
  const form = h('form', { class: 'card filters', role: 'search', id: 'delivery-filters', novalidate: true },
    field('Endpoint', c.endpoint_id, 'endpoint_id'), field('State', c.state, 'state'),
    field('Event id', c.event_id, 'event_id'), h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(ctx.detail);
    ctx.detailToken += 1;
    loadDeliveries(ctx, null);
  });
  return { form, controls: c };
}

async function loadDeliveries(ctx, cursor) {
  const { form, controls } = ctx.filters;
  const filters = Object.fromEntries(Object.entries(controls).map(([k, v]) => [k, v.value.trim()]));
  lastFilters = filters;
  // Only the latest request's answer is drawn: an earlier, slower one must not replace it.
  ctx.listToken += 1;
  const token = ctx.listToken;
  try {
    const { body } = await get('/admin/v1/webhook-deliveries' + query({ ...filters, limit: 50, cursor }));
    if (token !== ctx.listToken) return;
    showFieldErrors(form, []);
    ctx.shown = body.deliveries;
    replace(ctx.results, table(`Deliveries, newest first${cursor ? ' (continued)' : ''}`, [
      { label: 'Queued', value: (d) => d.created_at },
      { label: 'Endpoint', value: (d) => h('code', {}, urlOf(ctx, d.endpoint_id)) },
      { label: 'Event', value: (d) => d.event_type },
      { label: 'User', value: (d) => `${d.user_id} #${d.sequence}` },
      { label: 'Kind', value: (d) => d.kind },
      { label: 'State', value: (d) => h('span', { class: `state state-${d.state}` }, d.state) },
      { label: 'Attempts', value: (d) => String(d.attempts.length) },
      { label: 'Detail', value: (d) => h('button', { type: 'button', class: 'show-delivery', 'data-delivery': d.id,
        'aria-label': `Show delivery ${d.id}`, onclick: () => showDelivery(ctx, d, { focus: true }) }, 'Show') },
    ], body.deliveries, { id: 'deliveries' }),
    body.next_cursor ? h('button', { type: 'button', id: 'next-page', onclick: () => loadDeliveries(ctx, body.next_cursor) }, 'Next page') : null);
  } catch (error) {
    if (token !== ctx.listToken) return;
    const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
    replace(ctx.results, notice(problemText(error, unplaced), 'error'));
  }
}

function showEndpointDeliveries(ctx, endpointId) {
  const { controls } = ctx.filters;
  controls.endpoint_id.value = endpointId;
  controls.state.value = '';
  controls.event_id.value = '';
  replace(ctx.detail);
  ctx.detailToken += 1;
  return loadDeliveries(ctx, null).then(() => ctx.results.querySelector('caption')?.scrollIntoView({ block: 'nearest' }));
}

/** The current state of one delivery (the list filtered to its endpoint and event). */
async function fetchDelivery(endpointId, eventId, deliveryId) {
  const { body } = await get('/admin/v1/webhook-deliveries' + query({ endpoint_id: endpointId, event_id: eventId, limit: 200 }));
  return body.deliveries.find((d) => d.id === deliveryId) || null;
}

function showDelivery(ctx, d, { focus = false } = {}) {
  ctx.detailToken += 1;
  const token = ctx.detailToken;
  drawDelivery(ctx, d);
  if (focus) ctx.detail.querySelector('h2')?.focus();
  // Follows a pending delivery until it is settled, while this detail is still the one shown.
  let left = POLL_TIMES;
  const follow = async (current) => {
    if (current.state !== 'pending' || left-- <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (token !== ctx.detailToken || !ctx.view.isConnected) return;
    let fresh;
    try {
      fresh = await fetchDelivery(current.endpoint_id, current.event_id, current.id);
    } catch {
      return;
    }
    if (!fresh || token !== ctx.detailToken || !ctx.view.isConnected) return;
    drawDelivery(ctx, fresh);
    if (fresh.state !== 'pending') await loadDeliveries(ctx, null);
    else follow(fresh);
  };
  follow(d);
}

function drawDelivery(ctx, d) {
  const status = h('div', { id: 'delivery-detail-status' });
  replace(ctx.detail, h('section', { class: 'card', 'aria-labelledby': 'delivery-title' },
    h('h2', { id: 'delivery-title', tabindex: '-1' }, `Delivery ${d.id}`),
    facts([['State', h('span', { class: `state state-${d.state}`, id: 'delivery-state' }, d.state)],
      ['Endpoint', h('code', {}, urlOf(ctx, d.endpoint_id))], ['Event id', h('code', {}, d.event_id)],
      ['Event type', d.event_type], ['User', d.user_id], ['Sequence', String(d.sequence)], ['Kind', d.kind],
      ['Queued', d.created_at], ['Next attempt', d.state === 'pending' ? d.next_attempt_at : null],
      ['Delivered', d.delivered_at], ['Last error', d.last_error]]),
    h('h3', {}, 'Attempts'),
    table('Every attempt, oldest first', [
      { label: 'Attempt', value: (a) => String(d.attempts.indexOf(a) + 1) },
      { label: 'Time', value: (a) => a.attempted_at },
      { label: 'Took', value: (a) => `${a.duration_ms} ms` },
      { label: 'Outcome', value: (a) => a.outcome },
      { label: 'Status', value: (a) => (a.status_code === undefined || a.status_code === null ? '' : String(a.status_code)) },
      { label: 'Answer or error', value: (a) => h('pre', { class: 'excerpt' }, a.response_excerpt ?? a.error ?? '') },
    ], d.attempts, { id: 'delivery-attempts' }),
    h('div', { class: 'actions' },
      h('button', { type: 'button', id: 'refresh-delivery', onclick: () => refreshDelivery(ctx, d, status) }, 'Refresh'),
      session.canWrite ? h('button', { type: 'button', id: 'replay-delivery',
        onclick: () => replayFromDetail(ctx, d, status) }, 'Replay this event to this endpoint') : null),
    status));
}

async function refreshDelivery(ctx, d, status) {
  try {
    const fresh = await fetchDelivery(d.endpoint_id, d.event_id, d.id);
    if (!fresh) return replace(status, notice('This delivery is gone (its endpoint was removed, or it was past WEBHOOK_RETENTION).', 'error'));
    showDelivery(ctx, fresh);
    ctx.detail.querySelector('#refresh-delivery')?.focus();
  } catch (error) {
    replace(status, notice(problemText(error), 'error'));
  }
}

async function replayFromDetail(ctx, d, status) {
  try {
    await replay(ctx, d.endpoint_id, d.event_id);
  } catch (error) {
    replace(status, notice(problemText(error), 'error'));
  }
}

/** Queues `eventId` to the endpoint again, then lists that event's deliveries there and follows the new one. */
async function replay(ctx, endpointId, eventId) {
  const { body } = await call('POST', path('webhook-endpoints', endpointId, 'replay'), { body: { event_id: eventId } });
  replace(ctx.status, notice(`Queued ${body.queued} ${body.queued === 1 ? 'delivery' : 'deliveries'} of event ${eventId} to ${urlOf(ctx, endpointId)}.`, 'good'));
  await followEvent(ctx, endpointId, eventId, null);
}

async function sendTest(ctx, endpoint) {
  try {
    const { body } = await call('POST', path('webhook-endpoints', endpoint.id, 'test'), { body: {} });
    replace(ctx.status, notice(`Test event ${body.event_id} queued to ${endpoint.url}.`, 'good'));
    await followEvent(ctx, endpoint.id, body.event_id, body.delivery_id);
  } catch (error) {
    replace(ctx.status, notice(`The test event was not sent: ${problemText(error)}`, 'error'));
  }
}

/** Filters the list to one event at one endpoint and shows its delivery `deliveryId` (else the newest). */
async function followEvent(ctx, endpointId, eventId, deliveryId) {
  const { controls } = ctx.filters;
  controls.endpoint_id.value = endpointId;
  controls.state.value = '';
  controls.event_id.value = eventId;
  await loadDeliveries(ctx, null);
  const shown = ctx.shown || [];
  const delivery = shown.find((d) => d.id === deliveryId) || (deliveryId === null ? shown[0] : null);
  if (!delivery) return;
  showDelivery(ctx, delivery);
  // The outcome comes into view; the keyboard focus stays on the button that was pressed.
  ctx.detail.scrollIntoView({ block: 'nearest' });
}

async function setEnabled(ctx, endpoint, enabled) {
  const label = `${enabled ? 'Enable' : 'Disable'} ${endpoint.url}`;
  try {
    await call('PATCH', path('webhook-endpoints', endpoint.id), { body: { enabled } });
    await renderWebhooks(ctx.view, { message: `${endpoint.url} is ${enabled ? 'enabled' : 'disabled'}.` });
    // The keyboard focus stays on the same endpoint's switch.
    ctx.view.querySelector(`button[data-endpoint="${CSS.escape(endpoint.id)}"].${enabled ? 'disable' : 'enable'}`)?.focus();
  } catch (error) {
    replace(ctx.status, notice(`${label} failed: ${problemText(error)}`, 'error'));
  }
}
