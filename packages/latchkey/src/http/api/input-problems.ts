import { msg, type Message } from '../../core/i18n/message.js';
import { fieldOf, type InputProblem } from '../kit/declared-input.js';
import { checkDictionary, pythonTypeName } from './fields.js';

/**
 * What a view's declared body refused (kit/declared-input.ts), as Django REST framework's 400:
 * `{"field": ["message"]}` with DRF's serializer-field messages, every field's problem at once, and
 * `non_field_errors` for a body that is not an object of fields. Undefined when DRF would accept
 * the input after all: a number where text is declared is taken as its text, as DRF's CharField does.
 * The messages (DRF's, or a declared refusal's message id) are translated when the refusal is sent.
 */
export function drfInputErrors(body: unknown, problems: readonly InputProblem[]): Record<string, (Message | string)[]> | undefined {
  const whole = checkDictionary(body);
  if (!whole.ok) return { non_field_errors: [whole.error] };
  const errors: Record<string, (Message | string)[]> = {};
  for (const problem of problems) {
    const field = fieldOf(problem);
    if (field === undefined || field in errors) continue;
    const message = problem.refusal?.message ?? drfMessage(problem);
    if (message !== undefined) errors[field] = [message];
  }
  return Object.keys(errors).length > 0 ? errors : undefined;
}

/** DRF's message for one problem (rest_framework/fields.py), or undefined for one DRF does not have. */
function drfMessage(problem: InputProblem): Message | undefined {
  const params = problem.params as Record<string, unknown>;
  const value: unknown = problem.data;
  switch (problem.keyword) {
    case 'required':
      return msg('This field is required.');
    case 'type':
      return typeMessage(String(params.type), value);
    case 'enum':
      return msg('"{input}" is not a valid choice.', { input: String(value) });
    case 'maxLength':
      return msg('Ensure this field has no more than {max_length} characters.', { max_length: String(params.limit) });
    case 'minLength':
      return msg('Ensure this field has at least {min_length} characters.', { min_length: String(params.limit) });
    case 'maximum':
      return msg('Ensure this value is less than or equal to {max_value}.', { max_value: String(params.limit) });
    case 'minimum':
      return msg('Ensure this value is greater than or equal to {min_value}.', { min_value: String(params.limit) });
    default:
      return msg('Invalid value.');
  }
}

function typeMessage(expected: string, value: unknown): Message | undefined {
  if (value === null) return msg('This field may not be null.');
  if (expected.split(',').includes('string')) return typeof value === 'number' && Number.isFinite(value) ? undefined : msg('Not a valid string.');
  if (expected === 'boolean') return msg('Must be a valid boolean.');
  if (expected === 'integer') return msg('A valid integer is required.');
  if (expected === 'number') return msg('A valid number is required.');
  if (expected === 'array') return msg('Expected a list of items but got type "{input_type}".', { input_type: pythonTypeName(value) });
  if (expected === 'object') return msg('Expected a dictionary of items but got type "{input_type}".', { input_type: pythonTypeName(value) });
  return msg('Invalid value.');
}
