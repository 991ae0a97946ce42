// App Store notifications and consumption requests: filtered lists, newest first, and the
// detail of one (its decoded payload), shown as text.
import { h, replace, field, showFieldErrors, table, notice, facts, json } from './dom.js';
import { get, query, ApiError } from './api.js';

const STATES = ['', 'pending', 'deferred', 'processed', 'failed', 'unhandled'];
const filtersBySection = { notifications: {}, consumption: {} };

export async function renderNotifications(main, { consumption }) {
  const section = consumption ? 'consumption' : 'notifications';
  const endpoint = consumption ? '/admin/v1/consumption-requests' : '/admin/v1/notifications';
  const c = {
    notification_type: consumption ? null : h('input', { name: 'notification_type', autocomplete: 'off', spellcheck: 'false' }),
    state: h('select', { name: 'state' }, STATES.map((s) => h('option', { value: s }, s || 'any'))),
    transaction_id: h('input', { name: 'transaction_id', autocomplete: 'off', spellcheck: 'false' }),
  };
  for (const [k, v] of Object.entries(filtersBySection[section])) if (c[k]) c[k].value = v;
  const results = h('div', { id: 'notification-results' });
  const detail = h('div', { id: 'notification-detail' });
  const form = h('form', { class: 'card filters', role: 'search', id: 'notification-filters', novalidate: true },
    c.notification_type ? field('Type', c.notification_type, 'notification_type') : null,
    field('State', c.state, 'state'), field('Transaction id', c.transaction_id, 'transaction_id'),
    h('button', { type: 'submit' }, 'Filter'));
  const load = async (cursor) => {
    const filters = Object.fromEntries(Object.entries(c).filter(([, v]) => v).map(([k, v]) => [k, v.value.trim()]));
    filtersBySection[section] = filters;
    try {
      const { body } = await get(endpoint + query({ ...filters, limit: 50, cursor }));
      showFieldErrors(form, []);
      replace(results, table(consumption ? 'Consumption requests, newest first' : 'Notifications, newest first', [
        { label: 'Received', value: (n) => n.received_at },
        { label: 'Type', value: (n) => n.notification_type + (n.subtype ? ` / ${n.subtype}` : '') },
        { label: 'State', value: (n) => n.state },
        { label: 'Transaction', value: (n) => n.transaction_id || '' },
        ...(consumption ? [{ label: 'Answer', value: answerSummary }] : []),
        { label: 'Detail', value: (n) => h('button', { type: 'button', class: 'show-detail',
          'aria-label': `Show notification ${n.notification_uuid}`, onclick: () => showDetail(detail, n) }, 'Show') },
      ], body.notifications, { id: 'notifications' }),
      body.next_cursor ? h('button', { type: 'button', id: 'next-page', onclick: () => load(body.next_cursor) }, 'Next page') : null);
    } catch (error) {
      const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
      replace(results, notice(error.message + unplaced.map((e) => ` ${e.field}: ${e.message}`).join(';'), 'error'));
    }
  };
  form.addEventListener('submit', (event) => { event.preventDefault(); replace(detail); load(null); });
  replace(main, h('h1', {}, consumption ? 'Consumption requests' : 'Notifications'),
    consumption ? h('p', {}, 'Apple asks for consumption information when a customer requests a refund of a consumable.') : null,
    form, results, detail);
  await load(null);
}

function showDetail(detail, n) {
  replace(detail, h('section', { class: 'card', 'aria-labelledby': 'detail-title' },
    h('h2', { id: 'detail-title', tabindex: '-1' }, `Notification ${n.notification_uuid}`),
    facts([['Type', n.notification_type], ['Subtype', n.subtype], ['Environment', n.environment],
      ['State', n.state], ['Result', n.result], ['Signed', n.signed_date], ['Received', n.received_at],
      ['Processed', n.processed_at], ['Transaction', n.transaction_id],
      ['Original transaction', n.original_transaction_id]]),
    h('h3', {}, 'Payload'), json(n.payload)));
  detail.querySelector('h2').focus();
}

// What Storekeeper answered Apple: the state, then what it sent (delivery, share consumed in
// percent, refund preference) or why it sent nothing.
function answerSummary(n) {
  const c = n.consumption_answer;
  if (!c) return '';
  const sent = c.answer;
  if (c.state === 'sent' && sent) {
    const share = sent.consumptionPercentage === undefined ? '' : ` ${sent.consumptionPercentage / 1000}% consumed`;
    return `sent: ${sent.deliveryStatus}${share}${sent.refundPreference ? `, ${sent.refundPreference}` : ''}`;
  }
  return c.state + (c.outcome ? ` (${c.outcome})` : '') + (c.last_error ? ` — ${c.last_error}` : '');
}
