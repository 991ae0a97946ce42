// Catalog: products in sort order; create, edit (If-Match, with a conflict view on 412),
// reorder, deactivate; each product's price history as a chart and a table.
import { h, replace, field, showFieldErrors, table, notice, facts, json } from './dom.js';
import { session, call, get, path, ApiError } from './api.js';
import { lineChart } from './chart.js';

const TYPES = ['consumable', 'non_consumable', 'auto_renewable', 'non_renewing'];

// A product's ETag is its revision (openapi.yaml, AdminProduct.revision): what the admin saw.
const etagOf = (product) => `"p${product.revision}"`;

// The new-product form's route: '+' is in no product id, so no product (not even one whose id is
// "new") shares it.
const CREATE = '+new';

export async function renderCatalog(main, rest) {
  if (rest[0] === CREATE && session.canWrite) return renderCreate(main);
  if (rest[0]) return renderProduct(main, rest[0]);
  return renderList(main);
}

async function renderList(main, message) {
  const { body } = await get('/admin/v1/products');
  const products = body.products;
  const status = h('div', { id: 'catalog-status' }, message ? notice(message) : null);
  const columns = [
    { label: 'Order', value: (p) => String(p.sort_order) },
    { label: 'Product', value: (p) => h('a', { href: `#/catalog/${encodeURIComponent(p.product_id)}` }, p.product_id) },
    { label: 'Title', value: (p) => p.title },
    { label: 'Type', value: (p) => p.type },
    { label: 'Price', value: (p) => p.price },
    { label: 'Currency', value: (p) => p.currency },
    { label: 'Grants', value: (p) => h('code', {}, JSON.stringify(p.grants)) },
    { label: 'Active', value: (p) => (p.active ? 'yes' : 'no') },
  ];
  if (session.canWrite) {
    columns.push({ label: 'Actions', value: (p) => {
      const i = products.indexOf(p);
      return h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'move-up', disabled: i === 0,
          'aria-label': `Move ${p.product_id} up`, onclick: () => move(main, products, i, -1, status) }, '↑ Up'),
        h('button', { type: 'button', class: 'move-down', disabled: i === products.length - 1,
          'aria-label': `Move ${p.product_id} down`, onclick: () => move(main, products, i, 1, status) }, '↓ Down'),
        h('button', { type: 'button', class: p.active ? 'deactivate' : 'activate',
          'aria-label': `${p.active ? 'Deactivate' : 'Activate'} ${p.product_id}`,
          onclick: () => setActive(main, p, !p.active, status) }, p.active ? 'Deactivate' : 'Activate'));
    } });
  }
  replace(main,
    h('h1', {}, 'Catalog'),
    session.canWrite ? h('p', {}, h('a', { class: 'button', href: `#/catalog/${CREATE}`, id: 'new-product' }, 'New product')) : null,
    status,
    table(`${products.length} products, in the order apps show them`, columns, products, { id: 'products' }));
}

/**
 * Moves products[i] by `delta`: one request lists the whole catalog in its new order with the
 * revisions this page loaded, and the server renumbers it in one transaction, or, when another
 * admin changed, added or removed a product meanwhile (412), writes nothing.
 */
async function move(main, products, i, delta, status) {
  const order = products.slice();
  const [moved] = order.splice(i, 1);
  order.splice(i + delta, 0, moved);
  const direction = delta < 0 ? 'up' : 'down';
  try {
    await call('PUT', '/admin/v1/product-order',
      { body: { products: order.map((p) => ({ product_id: p.product_id, revision: p.revision })) } });
    await renderList(main, `Moved ${moved.product_id} ${direction}.`);
    main.querySelector(`button[aria-label="Move ${CSS.escape(moved.product_id)} ${direction}"]`)?.focus();
  } catch (error) {
    const text = error.status === 412
      ? 'Another admin changed the catalog meanwhile, so nothing was moved; the list is reloaded, try again.'
      : `Reordering failed: ${error.message}; the list is reloaded.`;
    await renderList(main);
    main.querySelector('#catalog-status').append(notice(text, 'error'));
  }
}

async function setActive(main, product, active, status) {
  try {
    await call('PATCH', path('products', product.product_id),
      { body: { active }, headers: { 'If-Match': etagOf(product) } });
    await renderList(main, `${product.product_id} is ${active ? 'active' : 'deactivated'}.`);
  } catch (error) {
    replace(status, notice(`${active ? 'Activating' : 'Deactivating'} failed: ${error.message}`, 'error'));
  }
}

// ---------------------------------------------------------------------------------------------
// Forms

function controls(product) {
  const c = {
    product_id: h('input', { name: 'product_id', required: true, maxlength: 100, autocomplete: 'off' }),
    type: h('select', { name: 'type' }, TYPES.map((t) => h('option', { value: t }, t))),
    title: h('input', { name: 'title', required: true, maxlength: 200 }),
    description: h('textarea', { name: 'description', rows: 2, maxlength: 2000 }),
    price: h('input', { name: 'price', required: true, inputmode: 'decimal', autocomplete: 'off' }),
    currency: h('input', { name: 'currency', required: true, maxlength: 3, size: 4, autocomplete: 'off' }),
    sort_order: h('input', { name: 'sort_order', type: 'number', step: 1 }),
    active: h('input', { name: 'active', type: 'checkbox', id: 'active-box' }),
    grants: h('textarea', { name: 'grants', rows: 3, spellcheck: 'false' }),
    content: h('textarea', { name: 'content', rows: 3, spellcheck: 'false' }),
    google_product_id: h('input', { name: 'google_product_id', maxlength: 100, autocomplete: 'off',
      placeholder: 'same as the product id' }),
    google_base_plan_id: h('input', { name: 'google_base_plan_id', maxlength: 63, autocomplete: 'off',
      placeholder: 'any (subscriptions only)' }),
  };
  const p = product || { type: 'consumable', title: '', description: '', price: '', currency: 'USD',
    sort_order: 0, active: true, grants: { balance: { gold: 100 } }, content: {} };
  c.product_id.value = p.product_id || '';
  c.type.value = p.type;
  c.title.value = p.title;
  c.description.value = p.description || '';
  c.price.value = p.price;
  c.currency.value = p.currency;
  c.sort_order.value = String(p.sort_order);
  c.active.checked = !!p.active;
  c.grants.value = JSON.stringify(p.grants || {});
  c.content.value = JSON.stringify(p.content || {});
  // Shown empty when it is the App Store id, the default.
  c.google_product_id.value = p.google_product_id && p.google_product_id !== p.product_id ? p.google_product_id : '';
  c.google_base_plan_id.value = p.google_base_plan_id || '';
  return c;
}

/** The form's values as the API spells them; JSON fields that do not parse are field errors. */
function values(c, errors) {
  const parse = (name) => {
    try { return JSON.parse(c[name].value || '{}'); } catch {
      errors.push({ field: name, message: 'must be JSON, such as {"balance": {"gold": 100}}' });
      return undefined;
    }
  };
  const order = Number(c.sort_order.value);
  if (!Number.isInteger(order)) errors.push({ field: 'sort_order', message: 'must be a whole number' });
  return { title: c.title.value, description: c.description.value, price: c.price.value.trim(),
    currency: c.currency.value.trim().toUpperCase(), sort_order: order, active: c.active.checked,
    grants: parse('grants'), content: parse('content'),
    // Empty sets each back to its default.
    google_product_id: c.google_product_id.value.trim(), google_base_plan_id: c.google_base_plan_id.value.trim() };
}

function formFields(c, { creating }) {
  return [
    creating ? field('Product id', c.product_id, 'product_id') : null,
    creating ? field('Type', c.type, 'type') : null,
    field('Title', c.title, 'title'),
    field('Description', c.description, 'description'),
    h('div', { class: 'row' }, field('Price', c.price, 'price'), field('Currency', c.currency, 'currency'),
      field('Sort order', c.sort_order, 'sort_order')),
    h('div', { class: 'field checkbox' }, c.active, h('label', { for: 'active-box' }, 'Active (apps can buy it)'),
      h('p', { class: 'field-error', id: 'active-box-error', 'data-error-for': 'active' })),
    field('Grants (JSON)', c.grants, 'grants'),
    field('Content (JSON)', c.content, 'content'),
    h('div', { class: 'row' }, field('Google Play product id', c.google_product_id, 'google_product_id'),
      field('Google Play base plan', c.google_base_plan_id, 'google_base_plan_id')),
  ];
}

function renderCreate(main) {
  const c = controls(null);
  const status = h('div', { id: 'form-status' });
  const form = h('form', { class: 'card', id: 'product-form', novalidate: true },
    formFields(c, { creating: true }), h('button', { type: 'submit' }, 'Create product'), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const errors = [];
    const body = { type: c.type.value, ...values(c, errors) };
    const id = c.product_id.value.trim();
    if (!id) errors.push({ field: 'product_id', message: 'is required' });
    if (errors.length) return showFieldErrors(form, errors);
    try {
      // PUT replaces a product that exists: creating must not overwrite one, even one another
      // admin creates meanwhile, so the server is asked to create only.
      const created = await call('PUT', path('products', id), { body, headers: { 'If-None-Match': '*' } })
        .catch((e) => (e.status === 412 ? null : Promise.reject(e)));
      if (!created) return showFieldErrors(form, [{ field: 'product_id', message: 'is taken by an existing product' }]);
      location.hash = `#/catalog/${encodeURIComponent(id)}`;
    } catch (error) {
      showProblem(form, status, error);
    }
  });
  replace(main, h('h1', {}, 'New product'), h('p', {}, h('a', { href: '#/catalog' }, '← Catalog')), form);
}

function showProblem(form, status, error) {
  const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
  const extra = unplaced.map((e) => `${e.field}: ${e.message}`).join('; ');
  replace(status, notice(`${error.message}${extra ? ` (${extra})` : ''}`, 'error'));
}

const EDITABLE = ['title', 'description', 'price', 'currency', 'sort_order', 'active', 'grants', 'content', 'google_product_id', 'google_base_plan_id'];
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function renderProduct(main, id) {
  const { body: product, etag } = await get(path('products', id));
  const { body: history } = await get(path('products', id, 'price-history'));
  const { body: prices } = await get(path('products', id, 'prices'));
  const parts = [h('h1', {}, product.title), h('p', {}, h('a', { href: '#/catalog' }, '← Catalog'))];
  parts.push(facts([['Product id', product.product_id], ['Type', product.type],
    ['Price', `${product.price} ${product.currency}`], ['Active', product.active ? 'yes' : 'no'],
    ['Google Play id', product.google_product_id + (product.google_base_plan_id ? ` (base plan ${product.google_base_plan_id})` : '')],
    ['Revision', String(product.revision)], ['Updated', product.updated_at]]));
  if (session.canWrite) parts.push(editForm(main, product, etag));
  else parts.push(h('h2', {}, 'Grants and content'), json({ grants: product.grants, content: product.content }));
  parts.push(storefrontSection(main, product, prices.prices));
  parts.push(historySection(product, history.history));
  replace(main, ...parts);
}

function editForm(main, product, etag) {
  const c = controls(product);
  const status = h('div', { id: 'form-status' });
  const form = h('form', { class: 'card', id: 'product-form', novalidate: true },
    h('h2', {}, 'Edit'), formFields(c, { creating: false }),
    h('button', { type: 'submit' }, 'Save changes'), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const errors = [];
    const wanted = values(c, errors);
    if (errors.length) return showFieldErrors(form, errors);
    const changes = {};
    // The form shows the Google fields empty when they are the defaults.
    const shown = { ...product, google_base_plan_id: product.google_base_plan_id || '',
      google_product_id: product.google_product_id !== product.product_id ? product.google_product_id : '' };
    for (const key of EDITABLE) if (!same(wanted[key], shown[key])) changes[key] = wanted[key];
    if (Object.keys(changes).length === 0) {
      replace(status, notice('Nothing changed.'));
      return;
    }
    await save(main, form, status, product, etag, changes);
  });
  return form;
}

async function save(main, form, status, seen, etag, changes) {
  try {
    await call('PATCH', path('products', seen.product_id), { body: changes, headers: { 'If-Match': etag } });
    await renderProduct(main, seen.product_id);
    main.querySelector('#form-status')?.append(notice('Saved.'));
  } catch (error) {
    if (error.status === 412) return showConflict(main, form, status, seen, changes);
    showProblem(form, status, error);
  }
}

/** Someone saved first: what they changed, what this edit changes, and the way forward. */
async function showConflict(main, form, status, seen, changes) {
  const { body: current, etag } = await get(path('products', seen.product_id));
  const changedByOther = EDITABLE.filter((k) => !same(seen[k], current[k]));
  const fields = [...new Set([...changedByOther, ...Object.keys(changes)])];
  const show = (v) => (v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const panel = h('section', { class: 'card conflict', id: 'conflict', role: 'alert', 'aria-labelledby': 'conflict-title' },
    h('h2', { id: 'conflict-title' }, 'Another admin changed this product first'),
    h('p', {}, `Your edit was not saved: the product is now at revision ${current.revision}.`),
    table('What changed', [
      { label: 'Field', value: (k) => k },
      { label: 'When you opened it', value: (k) => show(seen[k]) },
      { label: 'Now', value: (k) => show(current[k]) },
      { label: 'Your edit', value: (k) => (k in changes ? show(changes[k]) : 'unchanged') },
    ], fields, { id: 'conflict-fields' }),
    h('div', { class: 'actions' },
      h('button', { type: 'button', id: 'apply-on-top', onclick: () => save(main, form, status, current, etag, changes) },
        'Apply my edit on top'),
      h('button', { type: 'button', id: 'discard-edit', onclick: () => renderProduct(main, seen.product_id) },
        'Discard my edit')));
  replace(status, panel);
  panel.querySelector('#apply-on-top').focus();
}

/** The product's own price in each storefront that has one; the default applies elsewhere. */
function storefrontSection(main, product, prices) {
  const columns = [
    { label: 'Storefront', value: (p) => p.storefront },
    { label: 'Price', value: (p) => p.price },
    { label: 'Currency', value: (p) => p.currency },
    { label: 'Updated', value: (p) => p.updated_at },
  ];
  const status = h('div', { id: 'storefront-status' });
  if (session.canWrite) {
    columns.push({ label: 'Actions', value: (p) => h('button', { type: 'button', class: 'remove-price',
      'aria-label': `Remove the ${p.storefront} price`, onclick: async () => {
        try {
          await call('DELETE', path('products', product.product_id, 'prices', p.storefront));
          await renderProduct(main, product.product_id);
          main.querySelector('#storefront-status')?.append(notice(`The ${p.storefront} price is removed; the default applies there.`));
        } catch (error) {
          replace(status, notice(`Removing failed: ${error.message}`, 'error'));
        }
      } }, 'Remove') });
  }
  const parts = [h('h2', { id: 'storefronts-title' }, 'Prices per storefront'),
    h('p', {}, `Storefronts without a price of their own are sold at ${product.price} ${product.currency}.`),
    status,
    table(`${prices.length} storefront prices`, columns, prices, { id: 'storefront-prices' })];
  if (session.canWrite) {
    const c = {
      storefront: h('input', { name: 'storefront', required: true, maxlength: 3, size: 4, autocomplete: 'off' }),
      price: h('input', { name: 'price', required: true, inputmode: 'decimal', autocomplete: 'off' }),
      currency: h('input', { name: 'currency', required: true, maxlength: 3, size: 4, autocomplete: 'off' }),
    };
    const formStatus = h('div', { id: 'storefront-form-status' });
    const form = h('form', { class: 'card', id: 'storefront-form', novalidate: true },
      h('h3', {}, 'Set a storefront price'),
      h('div', { class: 'row' }, field('Storefront (DEU or DE)', c.storefront, 'storefront'),
        field('Storefront price', c.price, 'price'), field('Storefront currency', c.currency, 'currency')),
      h('button', { type: 'submit' }, 'Set price'), formStatus);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const storefront = c.storefront.value.trim().toUpperCase();
      if (!storefront) return showFieldErrors(form, [{ field: 'storefront', message: 'is required' }]);
      try {
        const { body } = await call('PUT', path('products', product.product_id, 'prices', storefront), {
          body: { price: c.price.value.trim(), currency: c.currency.value.trim().toUpperCase() } });
        await renderProduct(main, product.product_id);
        main.querySelector('#storefront-status')?.append(notice(`${body.storefront}: ${body.price} ${body.currency}.`));
      } catch (error) {
        showProblem(form, formStatus, error);
      }
    });
    parts.push(form);
  }
  return h('section', { 'aria-labelledby': 'storefronts-title' }, parts);
}

function historySection(product, allHistory) {
  // The chart follows the default price; storefront prices are in the table below it.
  const history = allHistory.filter((change) => !change.storefront);
  const points = history.map((change) => ({
    x: change.changed_at.slice(0, 10), y: Number(change.new_price),
    title: `${change.changed_at}: ${change.new_price} ${change.new_currency} (by ${change.changed_by})`,
  }));
  const currencies = [...new Set(history.map((c) => c.new_currency))];
  return h('section', { 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title' }, 'Price history'),
    currencies.length > 1 ? notice(`The currency changed (${currencies.join(', ')}): the chart plots the numbers as they are.`) : null,
    lineChart(`Price of ${product.product_id} per change`, points, { yLabel: currencies.join('/'), id: 'price-chart' }),
    table('Every price change, oldest first', [
      { label: 'When', value: (c) => c.changed_at },
      { label: 'Storefront', value: (c) => c.storefront || 'default' },
      { label: 'From', value: (c) => (c.old_price ? `${c.old_price} ${c.old_currency}` : '—') },
      { label: 'To', value: (c) => (c.new_price ? `${c.new_price} ${c.new_currency}` : 'removed') },
      { label: 'By', value: (c) => c.changed_by },
    ], allHistory, { id: 'price-history' }));
}
