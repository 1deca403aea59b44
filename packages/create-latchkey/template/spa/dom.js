/**
 * Building the page from data without ever parsing it as HTML: every string becomes a text node
 * or an attribute value, so an address or a name that holds markup is shown, never run.
 */
/* global document */

/**
 * An element with attributes and children. `on<event>` attributes take listeners; strings and
 * numbers become text nodes; null, undefined and false are skipped.
 *
 * @param {string} tag
 * @param {Record<string, unknown>} [attributes]
 * @param {...unknown} children
 * @returns {HTMLElement}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === 'object' ? child : String(child));
  }
  return element;
}

/** A list of messages for a person to read: `role=status` for news, `role=alert` for errors. */
export function messageList(messages, kind = 'info') {
  if (messages.length === 0) return null;
  return h(
    'ul',
    { class: kind === 'error' ? 'errors' : 'messages', role: kind === 'error' ? 'alert' : 'status' },
    messages.map((message) => h('li', { class: kind === 'error' ? 'error' : 'message' }, message)),
  );
}

/**
 * A form whose submission calls `onSubmit(values)`. While it runs, the button is disabled (one
 * request at a time); when it resolves to a list of messages, they are shown as the form's errors
 * and the form stays. Fields are `{name, label, type?, autocomplete?, inputmode?, value?}`; a `checkbox` is optional, the others required.
 *
 * @param {{ fields: Array<Record<string, string>>, submitLabel: string, onSubmit: (values: Record<string, string>) => Promise<string[] | undefined>, name?: string, after?: unknown }} options
 */
export function form({ fields, submitLabel, onSubmit, name, after }) {
  const errors = h('div', { class: 'form-errors' });
  const button = h('button', { type: 'submit', class: 'button' }, submitLabel);
  const inputs = fields.map((field) => {
    const id = `field-${(name ?? 'form').toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${field.name}`;
    const checkbox = field.type === 'checkbox';
    const input = h('input', {
      id,
      name: field.name,
      type: field.type ?? 'text',
      autocomplete: field.autocomplete,
      inputmode: field.inputmode,
      value: checkbox ? undefined : field.value,
      // A checkbox may be left unticked; every other field is needed.
      required: !checkbox,
    });
    const row = checkbox ? h('div', { class: 'field field-checkbox' }, input, h('label', { for: id }, field.label)) : h('div', { class: 'field' }, h('label', { for: id }, field.label), input);
    return { field, input, row };
  });
  const element = h('form', { class: 'form', 'aria-label': name }, errors, inputs.map(({ row }) => row), h('div', { class: 'actions' }, button, after));
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    if (button.disabled) return;
    const values = Object.fromEntries(inputs.map(({ field, input }) => [field.name, input.value.trim()]));
    for (const { field, input } of inputs) {
      // A password is sent as typed: spaces at its ends are part of it. A ticked box reads 'on', as in a posted form.
      if (field.type === 'password') values[field.name] = input.value;
      if (field.type === 'checkbox') values[field.name] = input.checked ? 'on' : '';
    }
    button.disabled = true;
    errors.replaceChildren();
    onSubmit(values)
      .then((messages) => {
        if (messages && messages.length > 0) errors.replaceChildren(messageList(messages, 'error'));
      })
      .catch(() => {
        errors.replaceChildren(messageList(['Something went wrong. Please try again.'], 'error'));
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  return element;
}

/** A button that runs `action` once at a time (disabled while it runs). */
export function actionButton(label, action, attributes = {}) {
  const button = h('button', { type: 'button', class: 'button button-secondary', ...attributes }, label);
  button.addEventListener('click', () => {
    if (button.disabled) return;
    button.disabled = true;
    action().finally(() => {
      button.disabled = false;
    });
  });
  return button;
}
