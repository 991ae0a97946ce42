// Building DOM without HTML strings: every value from the server becomes a text node or an
// attribute value, never markup (product titles and notification payloads come from outside).

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(element, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      element.addEventListener(key.slice(2), value);
    } else if (key === 'class') {
      element.setAttribute('class', value);
    } else {
      element.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An HTML element: h('button', {type: 'button', onclick}, 'Save'). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replaces everything inside `element`. */
export function replace(element, ...children) {
  element.replaceChildren();
  return build(element, {}, children);
}

let fieldCounter = 0;

/** A labelled control: label, the control, and a place for the server's error beside it. */
export function field(labelText, control, name) {
  const id = control.id || `f${++fieldCounter}`;
  control.id = id;
  if (name) control.dataset.field = name;
  const error = h('p', { class: 'field-error', id: `${id}-error`, 'data-error-for': name || '' });
  control.setAttribute('aria-describedby', error.id);
  return h('div', { class: 'field' }, h('label', { for: id }, labelText), control, error);
}

/** Writes each problem+json field error beside its field in `form`; returns those not placed. */
export function showFieldErrors(form, errors) {
  for (const p of form.querySelectorAll('.field-error')) p.textContent = '';
  for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
  const unplaced = [];
  for (const error of errors || []) {
    const name = String(error.field || '');
    // "grants.gold" belongs to the grants field.
    const candidates = [name, name.split('.')[0], name.split('[')[0]];
    const slot = candidates
      .map((n) => [...form.querySelectorAll('[data-error-for]')].find((p) => p.dataset.errorFor === n))
      .find(Boolean);
    if (slot) {
      slot.textContent = slot.textContent ? `${slot.textContent}; ${error.message}` : `${name}: ${error.message}`;
      const control = form.querySelector(`#${CSS.escape(slot.id.replace(/-error$/, ''))}`);
      if (control) control.setAttribute('aria-invalid', 'true');
    } else {
      unplaced.push(error);
    }
  }
  const first = form.querySelector('[aria-invalid="true"]');
  if (first) first.focus();
  return unplaced;
}

/** A table: columns [{label, value: row => node|text}], with a caption. */
export function table(caption, columns, rows, attrs = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'stack', ...attrs },
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c.label)))),
      h('tbody', {}, rows.length === 0
        ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, 'Nothing to show.'))
        : rows.map((row) => h('tr', {}, columns.map((c) => h('td', { 'data-label': c.label }, c.value(row))))))));
}

/** A status message region (announced to screen readers). */
export function notice(text, kind = 'info') {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A definition list of label/value pairs. */
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** JSON shown as text. */
export function json(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}
