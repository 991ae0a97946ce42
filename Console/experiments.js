// Experiments: a placement's audience split between offerings; per variant the users exposed,
// payers, conversion with its 95% interval, revenue per exposed user and refunds; pause,
// resume, and conclude with a winner (whose offering then serves the placement).
import { h, replace, field, showFieldErrors, table, notice, facts } from './dom.js';
import { session, call, get, path, ApiError } from './api.js';

export async function renderExperiments(main, rest) {
  if (rest[0]) return renderExperiment(main, rest[0]);
  const { body } = await get('/admin/v1/experiments');
  const parts = [h('h1', {}, 'Experiments'),
    table(`${body.experiments.length} experiments, newest first`, [
      { label: 'Experiment', value: (e) => h('a', { href: `#/experiments/${encodeURIComponent(e.experiment_id)}` }, e.experiment_id) },
      { label: 'Placement', value: (e) => e.placement_id },
      { label: 'Status', value: (e) => e.status },
      { label: 'Variants', value: (e) => e.variants.map((v) => `${v.variant}: ${v.offering_id} (${v.weight})`).join(', ') },
      { label: 'Winner', value: (e) => e.winner || '—' },
    ], body.experiments, { id: 'experiments' })];
  if (session.canWrite) parts.push(createForm(main));
  replace(main, ...parts);
}

function createForm(main) {
  const c = {
    id: h('input', { name: 'experiment_id', required: true, maxlength: 64, autocomplete: 'off' }),
    placement: h('input', { name: 'placement_id', required: true, maxlength: 64, autocomplete: 'off' }),
    variants: h('input', { name: 'variants', required: true, autocomplete: 'off', spellcheck: 'false' }),
    hours: h('input', { name: 'attribution_hours', type: 'number', min: 1, max: 8760, step: 1 }),
  };
  c.hours.value = '168';
  const status = h('div', { id: 'experiment-form-status' });
  const form = h('form', { class: 'card', id: 'experiment-form', novalidate: true },
    h('h2', {}, 'Start an experiment'),
    field('Experiment id', c.id, 'experiment_id'), field('Placement', c.placement, 'placement_id'),
    field('Variants (offering:weight, comma-separated, 2 to 4)', c.variants, 'variants'),
    field('Attribution window (hours)', c.hours, 'attribution_hours'),
    h('button', { type: 'submit' }, 'Start experiment'), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const id = c.id.value.trim();
    const variants = c.variants.value.split(',').map((v) => v.trim()).filter(Boolean).map((item, i) => {
      const [offering_id, weight] = item.split(':');
      return { variant: String.fromCharCode(97 + i), offering_id: offering_id.trim(), weight: Number(weight || 1) };
    });
    try {
      await call('POST', '/admin/v1/experiments', { body: {
        experiment_id: id, placement_id: c.placement.value.trim(), variants,
        attribution_hours: Number(c.hours.value) } });
      location.hash = `#/experiments/${encodeURIComponent(id)}`;
    } catch (error) {
      const unplaced = error instanceof ApiError ? showFieldErrors(form, error.fieldErrors) : [];
      const extra = unplaced.map((e) => `${e.field}: ${e.message}`).join('; ');
      replace(status, notice(`${error.message}${extra ? ` (${extra})` : ''}`, 'error'));
    }
  });
  return form;
}

const percent = (x) => `${(100 * x).toFixed(1)}%`;
const money = (byCurrency) => Object.entries(byCurrency || {}).map(([c, v]) => `${v} ${c}`).join(', ') || '—';

async function renderExperiment(main, id, message) {
  const { body } = await get(path('experiments', id, 'results'));
  const e = body.experiment;
  const status = h('div', { id: 'experiment-status' }, message ? notice(message) : null);
  const parts = [h('h1', {}, `Experiment ${e.experiment_id}`),
    h('p', {}, h('a', { href: '#/experiments' }, '← Experiments')),
    facts([['Placement', e.placement_id], ['Status', e.status], ['Attribution window', `${e.attribution_hours} h`],
      ['Winner', e.winner], ['Started', e.created_at], ['Concluded', e.concluded_at]]),
    status,
    table('Results per variant (paid orders within the window after each user\'s first exposure)', [
      { label: 'Variant', value: (v) => v.variant },
      { label: 'Offering', value: (v) => v.offering_id },
      { label: 'Weight', value: (v) => String(v.weight) },
      { label: 'Exposed', value: (v) => String(v.exposed) },
      { label: 'Payers', value: (v) => String(v.payers) },
      { label: 'Conversion', value: (v) => percent(v.conversion) },
      { label: '95% interval', value: (v) => `${percent(v.conversion_low)} – ${percent(v.conversion_high)}` },
      { label: 'Revenue', value: (v) => money(v.revenue) },
      { label: 'Per exposed user', value: (v) => money(v.revenue_per_exposed) },
      { label: 'Refunds', value: (v) => (v.refunds ? `${v.refunds} (${money(v.refunded)})` : '0') },
    ], body.variants, { id: 'variant-results' })];
  if (session.canWrite && e.status !== 'concluded') {
    const act = async (action, payload) => {
      try {
        await call('POST', path('experiments', id, action), payload ? { body: payload } : {});
        await renderExperiment(main, id, `Experiment ${action === 'conclude' ? 'concluded' : action === 'pause' ? 'paused' : 'resumed'}.`);
      } catch (error) {
        replace(main.querySelector('#experiment-status'), notice(`${error.message}`, 'error'));
      }
    };
    const winner = h('select', { name: 'winner' }, e.variants.map((v) => h('option', { value: v.variant }, `${v.variant}: ${v.offering_id}`)));
    parts.push(h('div', { class: 'card actions', id: 'experiment-actions' },
      e.status === 'running'
        ? h('button', { type: 'button', id: 'pause', onclick: () => act('pause') }, 'Pause')
        : h('button', { type: 'button', id: 'resume', onclick: () => act('resume') }, 'Resume'),
      field('Winner', winner, 'winner'),
      h('button', { type: 'button', id: 'conclude', onclick: () => act('conclude', { winner: winner.value }) }, 'Conclude')));
  }
  replace(main, ...parts);
}
