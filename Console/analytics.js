// Analytics: the charts of GET /admin/v1/charts/{name} (docs/CHARTS.md), one SVG line per
// segment and currency, the rows as a table, a CSV of them, and a click on a point (or Enter
// on it) lists the transactions behind it.
import { h, replace, table, notice, field } from './dom.js';
import { get, query, path } from './api.js';
import { lineChart } from './chart.js';

// Each chart and the measure drawn by default.
const CHARTS = {
  revenue: 'net', new_customers: 'new_customers', payers: 'payers', refund_rate: 'rate_by_count',
  active_subscriptions: 'active_subscriptions', active_trials: 'active_trials', mrr: 'mrr', arr: 'arr',
  trial_conversion: 'conversion_rate', cohorts: 'retention', churn: 'churn_rate',
  reactivations: 'reactivations', billing_retry: 'in_billing_retry', grace_period: 'in_grace_period',
  consumption_requests: 'requests',
};
// The charts `?currency=` converts (docs/CHARTS.md, currency conversion).
const MONEY = new Set(['revenue', 'payers', 'refund_rate', 'mrr', 'arr', 'cohorts']);
const KEYS = new Set(['period', 'start', 'end', 'segment', 'currency', 'month']);
// A segment value narrows the transactions to it through the filter of the same dimension.
const FILTER_OF = { store: 'store', product: 'product', country: 'country', environment: 'environment' };

export async function renderAnalytics(main) {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 29 * 86400000).toISOString().slice(0, 10);
  const select = (name, options, value) => h('select', { name },
    options.map((o) => h('option', { value: o, selected: o === value }, o)));
  const controls = {
    chart: select('chart', Object.keys(CHARTS), 'revenue'),
    from: h('input', { type: 'date', name: 'from', value: monthAgo, required: true }),
    to: h('input', { type: 'date', name: 'to', value: today, required: true }),
    resolution: select('resolution', ['day', 'week', 'month'], 'day'),
    tz: h('input', { type: 'text', name: 'tz', value: 'UTC', spellcheck: 'false' }),
    segment: select('segment', ['none', 'store', 'product', 'country', 'environment'], 'none'),
    environment: select('environment', ['Production', 'Sandbox', 'all'], 'Production'),
    store: select('store', ['', 'app_store', 'google_play'], ''),
    product: h('input', { type: 'text', name: 'product', value: '', maxlength: 150, size: 14,
      placeholder: 'any', spellcheck: 'false' }),
    country: h('input', { type: 'text', name: 'country', value: '', maxlength: 7, size: 5,
      placeholder: 'any', spellcheck: 'false' }),
    currency: h('input', { type: 'text', name: 'currency', value: '', maxlength: 3, size: 4,
      placeholder: 'as paid', spellcheck: 'false' }),
  };
  const status = h('div', { id: 'analytics-status' });
  const result = h('div', { id: 'analytics-result' });
  const form = h('form', { class: 'card filters', id: 'analytics-form', novalidate: true },
    field('Chart', controls.chart, 'chart'), field('From', controls.from, 'from'),
    field('To', controls.to, 'to'), field('Resolution', controls.resolution, 'resolution'),
    field('Time zone', controls.tz, 'tz'), field('Segment', controls.segment, 'segment'),
    field('Environment', controls.environment, 'environment'), field('Store', controls.store, 'store'),
    field('Product', controls.product, 'product'), field('Country', controls.country, 'country'),
    field('Currency', controls.currency, 'currency'),
    h('button', { type: 'submit' }, 'Show'), status);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = Object.fromEntries(Object.entries(controls).map(([k, c]) => [k, c.value]));
    load(params, result, status, form);
  });
  replace(main, h('h1', {}, 'Analytics'), form, result);
  // The page opens in the zone the server counts payers and cohorts in (CHARTS_TIME_ZONE),
  // the team's: the first answer names it, and an untouched zone field follows it once.
  let zoneTouched = false;
  controls.tz.addEventListener('input', () => { zoneTouched = true; });
  const values = () => Object.fromEntries(Object.entries(controls).map(([k, c]) => [k, c.value]));
  const first = await load(values(), result, status, form);
  if (!zoneTouched && first?.counts_zone && first.counts_zone !== controls.tz.value) {
    controls.tz.value = first.counts_zone;
    await load(values(), result, status, form);
  }
}

// The newest request asked for: an answer to an older one (a slow chart asked for before a
// fast one) is not drawn over the newer answer.
let latestRequest = 0;

/** Asks for a chart and draws it; null when it failed or a newer request superseded it. */
async function load(params, result, status, form) {
  const ticket = ++latestRequest;
  const { chart, ...rest } = params;
  if (chart === 'cohorts') rest.resolution = 'month';
  // Money as signed unless a reporting currency is asked for, and only where there is money.
  rest.currency = rest.currency.trim().toUpperCase();
  if (!rest.currency || !MONEY.has(chart)) delete rest.currency;
  // An empty filter is no filter.
  for (const key of ['store', 'product', 'country']) {
    rest[key] = rest[key].trim();
    if (!rest[key]) delete rest[key];
  }
  replace(status);
  for (const p of form.querySelectorAll('.field-error')) p.textContent = '';
  let body;
  try {
    ({ body } = await get(path('charts', chart) + query(rest)));
  } catch (error) {
    if (ticket !== latestRequest) return null;
    for (const e of error.fieldErrors || []) {
      const slot = form.querySelector(`[data-error-for="${CSS.escape(String(e.field))}"]`);
      if (slot) slot.textContent = `${e.field}: ${e.message}`;
    }
    replace(status, notice(error.message, 'error'));
    return null;
  }
  if (ticket !== latestRequest) return null;
  const measures = [...new Set(body.rows.flatMap((r) => Object.keys(r).filter((k) => !KEYS.has(k)
    && (typeof r[k] === 'number' || (typeof r[k] === 'string' && !Number.isNaN(Number(r[k])))))))];
  const initial = measures.includes(CHARTS[chart]) ? CHARTS[chart] : measures[0];
  const seriesKey = (r) => chart === 'cohorts' ? `cohort ${r.period}${r.segment ? ` · ${r.segment}` : ''}`
    : [r.segment, r.currency].filter(Boolean).join(' · ') || 'all';
  const series = new Map();
  for (const row of body.rows) {
    const key = seriesKey(row);
    if (!series.has(key)) series.set(key, []);
    series.get(key).push(row);
  }
  const where = body.source === 'rollup'
    ? `From the hourly rollup, exact up to ${body.as_of} (${body.lag_seconds} s behind now).`
    : `From the transactions, as of ${body.as_of}.`;
  const converted = body.currency
    ? ` Converted into ${body.currency}${body.unconverted?.length ? `; no rate for ${body.unconverted.join(', ')}, shown as paid` : ''}.`
    : '';
  const counted = ['payers', 'cohorts'].includes(chart) && body.counts_zone && body.counts_zone !== body.tz
    ? ` Counted ahead in ${body.counts_zone} only: in ${body.tz} this chart counts its payers when asked.`
    : '';
  const behind = h('div', { id: 'point-transactions' });
  // A series without the measure (purchases whose store said no price) is in the table only.
  const draw = (measure) => {
    let index = 0;
    const drawn = [...series.entries()].filter(([, rows]) => rows.some((r) => r[measure] !== null && r[measure] !== undefined));
    return drawn.map(([key, rows]) => {
      const id = `analytics-chart-${index++}`;
      const points = rows.map((r) => {
        const label = chart === 'cohorts' ? `month ${r.month}` : r.period;
        const value = r[measure] === null || r[measure] === undefined ? null : Number(r[measure]);
        return { x: label, y: value, title: `${key}, ${label}: ${measure} ${r[measure] ?? '—'}` };
      });
      return lineChart(`${chart} — ${measure} — ${key}`, points, {
        yLabel: measure, id,
        onpoint: (i) => showTransactions(chart, rest, rows[i], body.segment, behind),
      });
    });
  };
  const drawing = h('div', { id: 'analytics-charts' }, draw(initial));
  // Every number a row has can be drawn; the chart's own measure first.
  const picker = h('select', { name: 'measure', id: 'analytics-measure' },
    measures.map((m) => h('option', { value: m, selected: m === initial }, m)));
  picker.addEventListener('change', () => replace(drawing, draw(picker.value)));
  const csv = toCSV(body.rows);
  // A data: URL (the CSP allows no blob: fetch, and the file is small: one range of rows).
  const download = h('a', { href: `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`,
    download: `${chart}-${body.from}-${body.to}.csv`, id: 'analytics-csv', class: 'button' }, 'Download CSV');
  const columns = ['period', 'segment', 'currency', ...(chart === 'cohorts' ? ['month'] : []), ...measures]
    .map((k) => ({ label: k, value: (r) => format(r[k]) }));
  replace(result,
    h('p', { id: 'analytics-source' }, where + converted + counted),
    body.rows.length ? [field('Measure', picker, 'measure'), drawing] : notice('Nothing in this range.'),
    behind,
    h('h2', {}, 'Table'),
    download,
    table(`${chart} by ${body.resolution} (${body.tz})`, columns, body.rows, { id: 'analytics-table' }));
  return body;
}

async function showTransactions(chart, params, row, segment, into, cursor, page = 1) {
  // A cohort's point is one of its months: that month's payments by its members. A row is one
  // currency's: the server lists that currency's transactions (point_currency), page by page.
  const filters = { ...params, period: row.period, limit: 200,
    ...(chart === 'cohorts' ? { month: row.month } : {}),
    ...(row.currency ? { point_currency: row.currency } : {}), ...(cursor ? { cursor } : {}) };
  if (segment !== 'none' && row.segment && FILTER_OF[segment]) filters[FILTER_OF[segment]] = row.segment;
  replace(into, h('p', { class: 'loading' }, 'Loading…'));
  try {
    const { body } = await get(path('charts', chart, 'transactions') + query(filters));
    const shown = body.transactions;
    const month = chart === 'cohorts' ? ` · month ${row.month}` : '';
    const paged = body.next_cursor || page > 1 ? ` (page ${page})` : '';
    const next = body.next_cursor
      ? h('button', { type: 'button', id: 'point-transactions-next',
          onclick: () => showTransactions(chart, params, row, segment, into, body.next_cursor, page + 1) }, 'Next page')
      : null;
    replace(into, h('h2', {}, `Transactions behind ${row.period}${month}${row.segment ? ` · ${row.segment}` : ''}${row.currency ? ` · ${row.currency}` : ''}`),
      table(`${shown.length} transaction${shown.length === 1 ? '' : 's'}${paged}`, [
        { label: 'Transaction', value: (t) => t.transaction_id }, { label: 'Event', value: (t) => t.event || '' },
        { label: 'User', value: (t) => t.user_id ? h('a', { href: `#/users/${encodeURIComponent(t.user_id)}` }, t.user_id) : '' },
        { label: 'Product', value: (t) => t.product_id }, { label: 'Price', value: (t) => t.price ? `${t.price} ${t.currency}` : '' },
        { label: 'Purchased', value: (t) => t.purchase_date }, { label: 'Refunded', value: (t) => t.refunded_at || '' },
      ], shown, { id: 'point-transactions-table' }), next);
    into.querySelector('h2').scrollIntoView({ block: 'nearest' });
  } catch (error) {
    replace(into, notice(error.message, 'error'));
  }
}

function format(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return Object.entries(value).map(([k, v]) => `${v} ${k}`).join(', ');
  return String(value);
}

// RFC 4180: every field quoted, quotes doubled; nested values (cohort revenue) as JSON.
function toCSV(rows) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v) => v === null || v === undefined ? '' : `"${(typeof v === 'object' ? JSON.stringify(v) : String(v)).replaceAll('"', '""')}"`;
  return [keys.join(','), ...rows.map((r) => keys.map((k) => cell(r[k])).join(','))].join('\r\n') + '\r\n';
}
