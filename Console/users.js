// Users: what one user owns (balances, entitlements, non-consumables), their orders with the
// store each is paid in, the ledger rows and Apple transactions behind it, and manual
// adjustments with a required reason.
import { h, replace, field, showFieldErrors, table, notice } from './dom.js';
import { session, call, get, path, query, ApiError } from './api.js';
import { STORES } from './orders.js';

// crypto.randomUUID needs a secure context; an admin listener on plain HTTP is not one.
function newKey() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export async function renderUsers(main, userId) {
  const input = h('input', { name: 'user_id', autocomplete: 'off', spellcheck: 'false', required: true });
  input.value = userId || '';
  const form = h('form', { class: 'card filters', id: 'user-lookup', role: 'search', novalidate: true },
    field('User id', input, 'user_id'), h('button', { type: 'submit' }, 'Look up'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // Exactly as typed: the server compares user ids byte for byte, so "carol " is another
    // user than "carol", and trimming would show (and adjust) the wrong one.
    const id = input.value;
    if (!id.trim()) return showFieldErrors(form, [{ field: 'user_id', message: 'is required' }]);
    const target = `#/users/${encodeURIComponent(id)}`;
    if (location.hash === target) renderUsers(main, id);
    else location.hash = target;
  });
  const content = h('div', { id: 'user' });
  replace(main, h('h1', {}, userId ? `User ${userId}` : 'Users'), form, content);
  if (!userId) return;
  if (userId !== userId.trim()) {
    main.insertBefore(notice(`This user id begins or ends with white space (${JSON.stringify(userId)}): ` +
      'ids are compared exactly, so it is not the user without it.', 'warning'), content);
  }
  try {
    await renderUser(content, userId);
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) showFieldErrors(form, [{ field: 'user_id', message: error.message }]);
    else throw error;
  }
}

async function renderUser(content, userId) {
  const [{ body: view }, { body: orders }, { body: ledger }, { body: transactions }, { body: adjustments }] = await Promise.all([
    get(path('users', userId)), get('/admin/v1/orders' + query({ user_id: userId, limit: 50 })),
    get(path('users', userId, 'ledger') + query({ limit: 50 })),
    get(path('users', userId, 'transactions') + query({ limit: 50 })),
    get(path('users', userId, 'adjustments') + query({ limit: 20 })),
  ]);
  // An asset owed but no longer held (its balance spent to zero) is still shown, with its debt.
  const assets = [...new Set([...Object.keys(view.balances), ...Object.keys(ledger.debts)])].sort();
  replace(content,
    h('h2', {}, 'Balances'),
    table('Balances (the sum of the ledger)', [
      { label: 'Asset', value: (a) => a },
      { label: 'Balance', value: (a) => h('span', { class: 'balance', 'data-asset': a }, String(view.balances[a] || 0)) },
      { label: 'Of which sandbox', value: (a) => String(view.sandbox_balances[a] || 0) },
      // What refunds of spent credits left owing (REFUND_POLICY=debt): the next credits repay it.
      { label: 'Owed', value: (a) => h('span', { class: 'debt', 'data-asset': a }, String(ledger.debts[a] || 0)) },
    ], assets, { id: 'balances' }),
    session.canWrite ? adjustmentForm(content, userId, assets) : null,
    h('h2', {}, 'Entitlements'),
    table('Active entitlements', [
      { label: 'Entitlement', value: (e) => e.entitlement },
      { label: 'Product', value: (e) => e.product_id },
      { label: 'Source', value: (e) => e.source },
      { label: 'Expires', value: (e) => e.expires_at || 'never' },
      { label: 'Sandbox', value: (e) => (e.sandbox ? 'yes' : 'no') },
    ], view.entitlements, { id: 'entitlements' }),
    h('h2', {}, 'Non-consumables'),
    table('Non-consumable products owned', [{ label: 'Product', value: (p) => p }], view.non_consumables, { id: 'non-consumables' }),
    h('h2', {}, 'Orders'),
    // Which store each order is paid in: a Google Play purchase has no Apple transaction below.
    table(`Orders, newest first${orders.next_cursor ? ' (the latest 50)' : ''}`, [
      { label: 'Trade number', value: (o) => h('a', { href: `#/orders/${encodeURIComponent(o.trade_no)}` }, o.trade_no) },
      { label: 'Product', value: (o) => o.product_id },
      { label: 'Store', value: (o) => h('span', { class: 'store', 'data-store': o.store || '' }, STORES[o.store] || o.store || '') },
      { label: 'Amount', value: (o) => `${o.amount} ${o.currency}` },
      { label: 'Status', value: (o) => o.trade_status + (o.close_reason ? ` (${o.close_reason})` : '') },
      { label: 'Environment', value: (o) => o.environment || '' },
      { label: 'Transaction', value: (o) => o.transaction_id || '' },
      { label: 'Created', value: (o) => o.created_at },
    ], orders.orders, { id: 'user-orders' }),
    h('h2', {}, 'Manual adjustments'),
    table('Adjustments made by admins, newest first', [
      { label: 'When', value: (a) => a.created_at },
      { label: 'Asset', value: (a) => a.asset },
      { label: 'Amount', value: (a) => (a.amount > 0 ? `+${a.amount}` : String(a.amount)) },
      { label: 'Environment', value: (a) => a.environment },
      { label: 'By', value: (a) => a.admin },
      { label: 'Reason', value: (a) => a.reason },
    ], adjustments.adjustments, { id: 'adjustments' }),
    h('h2', {}, 'Ledger'),
    table(`Ledger rows, newest first${ledger.next_cursor ? ' (the latest 50)' : ''}`, [
      { label: 'Row', value: (e) => String(e.id) },
      { label: 'When', value: (e) => e.created_at },
      { label: 'Asset', value: (e) => e.asset },
      { label: 'Amount', value: (e) => (e.amount > 0 ? `+${e.amount}` : String(e.amount)) },
      { label: 'Kind', value: (e) => e.kind },
      { label: 'Order', value: (e) => (e.trade_no ? h('a', { href: `#/orders/${encodeURIComponent(e.trade_no)}` }, e.trade_no) : '') },
      { label: 'Environment', value: (e) => e.environment },
    ], ledger.entries, { id: 'ledger' }),
    h('h2', {}, 'Apple transactions'),
    table(`Apple transactions${transactions.next_cursor ? ' (the first 50)' : ''}`, [
      { label: 'Transaction', value: (t) => t.transaction_id },
      { label: 'Product', value: (t) => t.product_id },
      { label: 'Order', value: (t) => (t.trade_no ? h('a', { href: `#/orders/${encodeURIComponent(t.trade_no)}` }, t.trade_no) : '') },
      { label: 'Environment', value: (t) => t.environment },
      { label: 'Purchased', value: (t) => t.purchase_date },
      { label: 'Revoked', value: (t) => t.revocation_date || '' },
      { label: 'Family Sharing', value: (t) => (t.family_shared ? 'shared with this user' : '') },
    ], transactions.transactions, { id: 'user-transactions' }));
}

function adjustmentForm(content, userId, assets) {
  const c = {
    direction: h('select', { name: 'direction' }, h('option', { value: 'grant' }, 'Grant (add)'),
      h('option', { value: 'revoke' }, 'Revoke (take away)')),
    asset: h('input', { name: 'asset', autocomplete: 'off', spellcheck: 'false', list: 'known-assets', required: true }),
    amount: h('input', { name: 'amount', type: 'number', min: 1, step: 1, required: true }),
    environment: h('select', { name: 'environment' }, h('option', { value: 'Production' }, 'Production'),
      h('option', { value: 'Sandbox' }, 'Sandbox')),
    reason: h('textarea', { name: 'reason', rows: 2, maxlength: 500, required: true }),
  };
  if (assets.length) c.asset.value = assets[0];
  // One key per intended adjustment: a resent click after a lost answer is not applied twice.
  let idempotencyKey = newKey();
  for (const control of Object.values(c)) control.addEventListener('input', () => { idempotencyKey = newKey(); });
  const status = h('div', { id: 'adjustment-status' });
  const form = h('form', { class: 'card', id: 'adjustment-form', novalidate: true },
    h('h2', {}, 'Adjust a balance'),
    h('p', {}, 'Every adjustment is written to the ledger and the audit trail with your token\'s name and the reason.'),
    h('datalist', { id: 'known-assets' }, assets.map((a) => h('option', { value: a }))),
    h('div', { class: 'row' }, field('Direction', c.direction, 'direction'), field('Asset', c.asset, 'asset'),
      field('Amount', c.amount, 'amount'), field('Environment', c.environment, 'environment')),
    field('Reason (required)', c.reason, 'reason'),
    h('button', { type: 'submit' }, 'Apply adjustment'), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const errors = [];
    const amount = Number(c.amount.value);
    if (!c.asset.value.trim()) errors.push({ field: 'asset', message: 'is required' });
    if (!Number.isInteger(amount) || amount <= 0) errors.push({ field: 'amount', message: 'must be a whole number above 0' });
    if (!c.reason.value.trim()) errors.push({ field: 'reason', message: 'is required: say why' });
    if (errors.length) return showFieldErrors(form, errors);
    const body = { asset: c.asset.value.trim(), amount: c.direction.value === 'revoke' ? -amount : amount,
      environment: c.environment.value, reason: c.reason.value.trim() };
    try {
      const { body: answer } = await call('POST', path('users', userId, 'adjustments'),
        { body, headers: { 'Idempotency-Key': idempotencyKey } });
      idempotencyKey = newKey();
      await renderUser(content, userId);
      content.querySelector('#adjustment-status')?.append(
        notice(`Applied: ${body.amount > 0 ? '+' : ''}${body.amount} ${body.asset}; the balance is now ${answer.balance}.`, 'good'));
    } catch (error) {
      const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
      replace(status, notice(error.message + unplaced.map((e) => ` ${e.field}: ${e.message}`).join(';'), 'error'));
    }
  });
  return form;
}
