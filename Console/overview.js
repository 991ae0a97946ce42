// Overview: paid orders and revenue per day per currency, reports waiting on Apple, and how
// long ago Apple last notified.
import { h, replace, table, notice } from './dom.js';
import { get, query } from './api.js';
import { lineChart } from './chart.js';

export async function renderOverview(main) {
  const { body } = await get('/admin/v1/overview' + query({ days: 30 }));
  const currencies = [...new Set(body.daily.map((d) => d.currency))].sort();
  const days = lastDays(body.days);
  const charts = currencies.map((currency) => {
    const byDay = new Map(body.daily.filter((d) => d.currency === currency).map((d) => [d.day, d]));
    const points = days.map((day) => {
      const d = byDay.get(day);
      return { x: day, y: d ? Number(d.revenue) : 0,
        title: `${day}: ${d ? d.revenue : '0'} ${currency} from ${d ? d.paid_orders : 0} paid orders` };
    });
    return lineChart(`Revenue per day in ${currency}, last ${body.days} days`, points, { yLabel: currency, id: `revenue-${currency}` });
  });
  const ordersByDay = new Map();
  for (const d of body.daily) ordersByDay.set(d.day, (ordersByDay.get(d.day) || 0) + d.paid_orders);
  const ordersChart = lineChart(`Paid orders per day (every currency), last ${body.days} days`,
    days.map((day) => ({ x: day, y: ordersByDay.get(day) || 0, title: `${day}: ${ordersByDay.get(day) || 0} paid orders` })),
    { yLabel: 'orders', id: 'paid-orders' });
  const age = body.last_notification_age_seconds;
  replace(main,
    h('h1', {}, 'Overview'),
    h('div', { class: 'stats' },
      h('div', { class: 'card stat', id: 'reports-waiting' }, h('span', { class: 'value' }, String(body.reports_waiting)), 'reports waiting on Apple'),
      h('div', { class: 'card stat', id: 'reports-waiting-google' }, h('span', { class: 'value' }, String(body.reports_waiting_google)), 'reports waiting on Google Play'),
      h('div', { class: 'card stat', id: 'last-notification' },
        h('span', { class: 'value' }, age === undefined ? 'never' : humanAge(age)),
        age === undefined ? 'no App Store notification received yet' : `since the last App Store notification (${body.last_notification_at})`)),
    h('h2', {}, 'Paid orders and revenue'),
    currencies.length ? [ordersChart, charts] : notice(`No production order was paid in the last ${body.days} days.`),
    table('Per day and currency (production, transfers not counted)', [
      { label: 'Day', value: (d) => d.day }, { label: 'Currency', value: (d) => d.currency },
      { label: 'Paid orders', value: (d) => String(d.paid_orders) }, { label: 'Revenue', value: (d) => d.revenue },
    ], body.daily.slice().reverse(), { id: 'daily' }));
}

function lastDays(count) {
  const out = [];
  const today = new Date();
  for (let i = count - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i));
    out.push(d.toISOString().slice(0, 10));
  }
  return out;
}

function humanAge(seconds) {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} days`;
}
