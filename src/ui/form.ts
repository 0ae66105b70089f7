/**
 * The edit form of a memory's page, derived from the field table (src/model/fields.ts): one
 * control per field marked `ui`, in the table's order, described as the table declares it.
 * The page renders what this says (GET /api/info `form`); a field added to the table with
 * `ui: true` appears in the form with no change to the page.
 */
import { FIELD_BY_KEY, type FieldDef, TABLE_FIELDS, type TableKind, UI_FIELDS } from '../model/fields.js';
import type { FormField, ShownField } from './wire.js';

function formField(f: FieldDef): FormField {
  // a form sends only what update takes
  if (!f.input || !f.update) throw new Error(`field ${f.key} is marked ui, but update does not take it`);
  return {
    key: f.key,
    label: f.label ?? `${f.key[0].toUpperCase()}${f.key.slice(1).replace(/_/g, ' ')}`,
    help: f.help,
    input: f.input,
    values: f.values ?? null,
    minimum: f.minimum ?? null,
    maximum: f.maximum ?? null,
    clears: f.update === 'set-clear',
    markdown: !f.frontmatter,
  };
}

/** The edit form's fields, in the table's order. */
export const FORM_FIELDS: readonly FormField[] = UI_FIELDS.map((k) => formField(FIELD_BY_KEY.get(k)!));

/**
 * The fields a memory's page lists beside the text, each by its kind (a number, a line, a date,
 * who and when): every field the table declares whole, in its order, so a row added there shows
 * with no change to the page.
 */
export const SHOWN_FIELDS: readonly ShownField[] = TABLE_FIELDS.map((f) => ({
  key: f.key,
  kind: f.kind as TableKind,
}));
