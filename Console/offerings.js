// Offerings and placements: what each place in an app offers, and the targeting rules that
// choose another offering for some callers. Rules are edited as JSON; the server names the
// field of any rule it cannot parse (rules[2].when.app_version.from), shown beside the editor.
import { h, replace, field, showFieldErrors, table, notice } from './dom.js';
import { session, call, get, path, ApiError } from './api.js';

export async function renderOfferings(main, message) {
  const [{ body: offerings }, { body: placements }] = await Promise.all([
    get('/admin/v1/offerings'), get('/admin/v1/placements')]);
  const status = h('div', { id: 'offerings-status' }, message ? notice(message) : null);
  const parts = [h('h1', {}, 'Offerings'),
    h('p', {}, 'The placement "default" serves the whole catalog until it is defined; GET /v1/offerings/{placement} is what apps read.'),
    status,
    table(`${offerings.offerings.length} offerings`, [
      { label: 'Offering', value: (o) => o.offering_id },
      { label: 'Title', value: (o) => o.title },
      { label: 'Badge', value: (o) => o.badge },
      { label: 'Products', value: (o) => o.products.map((p) => (p.badge ? `${p.product_id} (${p.badge})` : p.product_id)).join(', ') },
      { label: 'Metadata', value: (o) => h('code', {}, JSON.stringify(o.metadata)) },
    ], offerings.offerings, { id: 'offerings' }),
    table(`${placements.placements.length} placements`, [
      { label: 'Placement', value: (p) => p.placement_id },
      { label: 'Offering', value: (p) => p.offering_id },
      { label: 'Rules', value: (p) => (p.rules.length
        ? h('ol', { class: 'rules' }, p.rules.map((r) => h('li', {}, `${r.offering_id} when `, h('code', {}, JSON.stringify(r.when || {})))))
        : 'none') },
    ], placements.placements, { id: 'placements' })];
  if (session.canWrite) parts.push(offeringForm(main, offerings.offerings), placementForm(main, placements.placements));
  replace(main, ...parts);
}

function showProblem(form, status, error) {
  const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
  const extra = unplaced.map((e) => `${e.field}: ${e.message}`).join('; ');
  replace(status, notice(`${error.message}${extra ? ` (${extra})` : ''}`, 'error'));
}

const PRODUCTS_LABEL = 'Products, in order (JSON: each a product id or {"product_id", "badge"})';

function parseJSON(control, name, fallback, errors) {
  const text = control.value.trim();
  if (!text) return fallback;
  try { return JSON.parse(text); } catch {
    errors.push({ field: name, message: 'must be JSON' });
    return undefined;
  }
}

// A PUT replaces the whole record: naming one that exists loads its current values into the
// form, so saving a change to one field never wipes the others (a placement's rules).
function loadOnId(idControl, records, key, fill, status) {
  idControl.addEventListener('change', () => {
    const found = records.find((r) => r[key] === idControl.value.trim());
    if (!found) return replace(status);
    fill(found);
    replace(status, notice(`${found[key]} exists: its current values are loaded, and saving replaces it.`));
  });
}

function offeringForm(main, offerings) {
  const c = {
    id: h('input', { name: 'offering_id', required: true, maxlength: 64, autocomplete: 'off' }),
    title: h('input', { name: 'title', maxlength: 200 }),
    badge: h('input', { name: 'badge', maxlength: 100 }),
    products: h('textarea', { name: 'products', required: true, rows: 3, spellcheck: 'false' }),
    metadata: h('textarea', { name: 'metadata', rows: 2, spellcheck: 'false' }),
  };
  const status = h('div', { id: 'offering-form-status' });
  const form = h('form', { class: 'card', id: 'offering-form', novalidate: true },
    h('h2', {}, 'Create or replace an offering'),
    field('Offering id', c.id, 'offering_id'), field('Offering title', c.title, 'title'),
    field('Offering badge', c.badge, 'badge'),
    field(PRODUCTS_LABEL, c.products, 'products'),
    h('p', { class: 'hint' }, 'For example ["gold100", {"product_id": "vip", "badge": "Best value, 20% off"}].'),
    field('Metadata (JSON)', c.metadata, 'metadata'),
    h('button', { type: 'submit' }, 'Save offering'), status);
  loadOnId(c.id, offerings, 'offering_id', (o) => {
    c.title.value = o.title;
    c.badge.value = o.badge;
    // JSON keeps each product's own fields whatever its badge holds (commas, '=', quotes).
    c.products.value = JSON.stringify(o.products.map((p) => (p.badge ? { product_id: p.product_id, badge: p.badge } : p.product_id)));
    c.metadata.value = JSON.stringify(o.metadata);
  }, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const errors = [];
    const id = c.id.value.trim();
    if (!id) errors.push({ field: 'offering_id', message: 'is required' });
    const metadata = parseJSON(c.metadata, 'metadata', {}, errors);
    const products = parseJSON(c.products, 'products', [], errors);
    if (errors.length) return showFieldErrors(form, errors);
    try {
      await call('PUT', path('offerings', id), { body: { title: c.title.value, badge: c.badge.value, metadata, products } });
      await renderOfferings(main, `Offering ${id} saved.`);
    } catch (error) {
      showProblem(form, status, error);
    }
  });
  return form;
}

function placementForm(main, placements) {
  const c = {
    id: h('input', { name: 'placement_id', required: true, maxlength: 64, autocomplete: 'off' }),
    offering: h('input', { name: 'offering_id', required: true, maxlength: 64, autocomplete: 'off' }),
    rules: h('textarea', { name: 'rules', rows: 6, spellcheck: 'false' }),
  };
  c.rules.value = '[]';
  const status = h('div', { id: 'placement-form-status' });
  const form = h('form', { class: 'card', id: 'placement-form', novalidate: true },
    h('h2', {}, 'Create or replace a placement'),
    field('Placement id', c.id, 'placement_id'), field('Serves offering', c.offering, 'offering_id'),
    field('Targeting rules (JSON, first match wins)', c.rules, 'rules'),
    h('p', { class: 'hint' }, 'Each rule: {"offering_id": "…", "when": {…}}. Conditions: storefronts, stores, app_version {from, before}, locales, user (new, returning), has_paid, holds_entitlement, lacks_entitlement, balance {asset, at_least, below}.'),
    h('button', { type: 'submit' }, 'Save placement'), status);
  // The version loaded into the form: saving replaces only that one, so a form opened before an
  // experiment's conclusion cannot silently put back the offering the winner replaced.
  let loaded = null;
  loadOnId(c.id, placements, 'placement_id', (p) => {
    loaded = p;
    c.offering.value = p.offering_id;
    c.rules.value = JSON.stringify(p.rules, null, 2);
  }, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const errors = [];
    const id = c.id.value.trim();
    if (!id) errors.push({ field: 'placement_id', message: 'is required' });
    const rules = parseJSON(c.rules, 'rules', [], errors);
    if (errors.length) return showFieldErrors(form, errors);
    try {
      const headers = loaded && loaded.placement_id === id ? { 'If-Match': `"l${loaded.revision}"` } : {};
      await call('PUT', path('placements', id), { body: { offering_id: c.offering.value.trim(), rules }, headers });
      await renderOfferings(main, `Placement ${id} saved.`);
    } catch (error) {
      showProblem(form, status, error);
    }
  });
  return form;
}
