// Orders: search (trade number, user, status, creation date range) and one order's story:
// the offering it named, timeline, Apple transaction, verification and report attempts,
// notifications.
import { h, replace, field, showFieldErrors, table, notice, facts, json } from './dom.js';
import { get, path, query, ApiError } from './api.js';

const STATUSES = ['', 'WAIT_BUYER_PAY', 'TRADE_SUCCESS', 'TRADE_CLOSED'];
const orderLink = (tradeNo) => h('a', { href: `#/orders/${encodeURIComponent(tradeNo)}` }, tradeNo);

// The last search, so coming back from an order shows the same list.
let lastFilters = {};

export async function renderOrders(main) {
  const c = {
    trade_no: h('input', { name: 'trade_no', autocomplete: 'off', spellcheck: 'false' }),
    user_id: h('input', { name: 'user_id', autocomplete: 'off', spellcheck: 'false' }),
    trade_status: h('select', { name: 'trade_status' },
      STATUSES.map((s) => h('option', { value: s }, s || 'any'))),
    created_from: h('input', { name: 'created_from', type: 'date' }),
    created_to: h('input', { name: 'created_to', type: 'date' }),
  };
  for (const [k, v] of Object.entries(lastFilters)) if (c[k]) c[k].value = v;
  const results = h('div', { id: 'order-results' });
  const form = h('form', { class: 'card filters', id: 'order-search', role: 'search', novalidate: true },
    field('Trade number', c.trade_no, 'trade_no'), field('User id', c.user_id, 'user_id'),
    field('Status', c.trade_status, 'trade_status'), field('Created from', c.created_from, 'created_from'),
    field('Created before', c.created_to, 'created_to'), h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // A user id is kept exactly as typed (the server compares ids byte for byte).
    lastFilters = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, k === 'user_id' && v.value.trim() ? v.value : v.value.trim()]));
    const tradeNo = lastFilters.trade_no;
    if (tradeNo) {
      // A trade number names one order: open it (or say it does not exist).
      try {
        await get(path('orders', tradeNo));
        location.hash = `#/orders/${encodeURIComponent(tradeNo)}`;
      } catch (error) {
        if (error.status === 404) showFieldErrors(form, [{ field: 'trade_no', message: 'no order has this trade number' }]);
        else replace(results, notice(error.message, 'error'));
      }
      return;
    }
    await search(form, results, lastFilters, null);
  });
  replace(main, h('h1', {}, 'Orders'), form, results);
  await search(form, results, lastFilters, null);
}

async function search(form, results, filters, cursor) {
  // Dates are whole UTC days: "from" includes its day, "before" excludes its own.
  const params = {
    user_id: filters.user_id, trade_status: filters.trade_status,
    created_from: filters.created_from ? `${filters.created_from}T00:00:00Z` : '',
    created_to: filters.created_to ? `${filters.created_to}T00:00:00Z` : '',
    limit: 50, cursor,
  };
  try {
    const { body } = await get(`/admin/v1/orders${query(params)}`);
    showFieldErrors(form, []);
    const list = table(`Orders, newest first${cursor ? ' (continued)' : ''}`, [
      { label: 'Trade number', value: (o) => orderLink(o.trade_no) },
      { label: 'User', value: (o) => h('a', { href: `#/users/${encodeURIComponent(o.user_id)}` }, o.user_id) },
      { label: 'Product', value: (o) => o.product_id },
      { label: 'Store', value: (o) => STORES[o.store] || o.store || '' },
      { label: 'Amount', value: (o) => `${o.amount} ${o.currency}` },
      { label: 'Status', value: (o) => o.trade_status + (o.close_reason ? ` (${o.close_reason})` : '') },
      { label: 'Created', value: (o) => o.created_at },
    ], body.orders, { id: 'orders' });
    const more = body.next_cursor
      ? h('button', { type: 'button', id: 'next-page', onclick: () => search(form, results, filters, body.next_cursor) }, 'Next page')
      : null;
    replace(results, list, more);
  } catch (error) {
    const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
    replace(results, notice(error.message + unplaced.map((e) => ` ${e.field}: ${e.message}`).join(';'), 'error'));
  }
}

/** How the console names each store. */
export const STORES = { app_store: 'App Store', google_play: 'Google Play' };

export async function renderOrder(main, tradeNo) {
  let detail;
  try {
    ({ body: detail } = await get(path('orders', tradeNo)));
  } catch (error) {
    if (error.status !== 404) throw error;
    replace(main, h('h1', {}, 'Order not found'), notice(`No order has the trade number ${tradeNo}.`, 'error'),
      h('p', {}, h('a', { href: '#/orders' }, '← Orders')));
    return;
  }
  const o = detail.order;
  replace(main,
    h('h1', {}, `Order ${o.trade_no}`),
    h('p', {}, h('a', { href: '#/orders' }, '← Orders')),
    facts([
      ['Status', o.trade_status + (o.close_reason ? ` (${o.close_reason})` : '')],
      ['User', h('a', { href: `#/users/${encodeURIComponent(o.user_id)}` }, o.user_id)],
      ['Product', h('a', { href: `#/catalog/${encodeURIComponent(o.product_id)}` }, o.product_id)],
      ['Quantity', String(o.quantity)], ['Amount', `${o.amount} ${o.currency}`], ['Origin', o.origin],
      ['Store', STORES[o.store] || o.store], ['Verification', o.verification], ['Environment', o.environment],
      [o.store === 'google_play' ? 'Google order' : 'Apple transaction', o.transaction_id], ['Created', o.created_at], ['Paid', o.paid_at],
      ['Closed', o.closed_at], ['Expires', o.expires_at],
      // What the app said the order was made from, and the experiment variant that was.
      ['Placement', o.placement], ['Offering', o.offering],
      ['Experiment', o.experiment && h('a', { href: `#/experiments/${encodeURIComponent(o.experiment)}` }, o.experiment)],
      ['Variant', o.variant],
    ]),
    h('h2', {}, 'Timeline'),
    h('ol', { class: 'timeline', id: 'timeline' }, detail.history.map((e) => h('li', {},
      h('span', { class: 'when' }, `${e.created_at} · by ${e.cause}`),
      h('strong', {}, `${e.from_status ? `${e.from_status} → ` : ''}${e.to_status}`),
      e.reason ? ` (${e.reason})` : '',
      e.detail && Object.keys(e.detail).length ? h('details', {}, h('summary', {}, 'Detail'), json(e.detail)) : null))),
    h('h2', {}, o.store === 'google_play' ? 'Google Play purchase' : 'Apple transaction'),
    table(o.store === 'google_play' ? 'The Google Play purchase that paid this order' : 'Apple transactions that paid this order', [
      { label: 'Transaction', value: (t) => t.transaction_id },
      { label: 'Original', value: (t) => t.original_transaction_id },
      { label: 'Product', value: (t) => t.product_id },
      { label: 'Environment', value: (t) => t.environment },
      { label: 'Purchased', value: (t) => t.purchase_date },
      { label: 'Expires', value: (t) => t.expires_date || '' },
      { label: 'Revoked', value: (t) => t.revocation_date || '' },
      { label: 'Seen through', value: (t) => t.source },
    ], detail.transactions, { id: 'transactions' }),
    h('h2', {}, 'Verification and reports'),
    table('Reports the app sent, with their verification attempts', [
      { label: 'Report', value: (r) => String(r.id) },
      { label: 'Status reported', value: (r) => r.trade_status },
      { label: 'Proof', value: (r) => r.proof_kind || '' },
      { label: 'Outcome', value: (r) => r.outcome + (r.outcome_code ? ` (${r.outcome_code})` : '') },
      { label: 'Attempts', value: (r) => String(r.attempts) },
      { label: 'Next attempt', value: (r) => r.next_attempt_at || '' },
      { label: 'Last error', value: (r) => r.last_error || '' },
      { label: 'Received', value: (r) => r.created_at },
    ], detail.reports, { id: 'reports' }),
    h('h2', {}, 'Notifications'),
    table('App Store notifications about its transaction', [
      { label: 'Type', value: (n) => n.notification_type + (n.subtype ? ` / ${n.subtype}` : '') },
      { label: 'State', value: (n) => n.state },
      { label: 'Result', value: (n) => n.result || '' },
      { label: 'Received', value: (n) => n.received_at },
    ], detail.notifications, { id: 'order-notifications' }));
}
