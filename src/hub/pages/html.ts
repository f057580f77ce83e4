/**
 * HTML with every value escaped: `html` is a tagged template whose interpolations are escaped
 * unless they are already `Html` (made by `html` itself or by `raw` for constant markup). Package
 * content is hostile input, so nothing reaches a page any other way.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup the code itself wrote (never data). */
export function raw(text: string): Html {
  return new Html(text);
}

/** JSON for a `<script type="application/json">` block: no `<`, so it cannot close the element. */
export function jsonScript(value: unknown): Html {
  return new Html(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
}

/** A path segment of a link, percent-encoded. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
