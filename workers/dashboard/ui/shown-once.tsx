/**
 * A credential the API answers exactly once (an agent key, a runner token): shown in the one response
 * that created it, with a copy button, never in a URL, a cookie or a later page.
 */
export function ShownOnce(props: {
  id: string;
  heading: string;
  label: string;
  value: string;
  note: string;
}) {
  return (
    <section class="panel" aria-labelledby={`${props.id}-heading`}>
      <h2 id={`${props.id}-heading`}>{props.heading}</h2>
      <p class="alert" role="status">
        Copy it now: it will not be shown again. {props.note}
      </p>
      <div class="field">
        <label for={props.id}>{props.label}</label>
        <div class="copy-row">
          <input id={props.id} class="secret" readonly value={props.value} />
          <button type="button" class="secondary" data-copy={props.id}>
            Copy
          </button>
        </div>
      </div>
    </section>
  );
}

type JsonParse = { ok: true; value: unknown } | { ok: false; message: string };

/** A JSON textarea: empty is "not sent", anything else must parse (the API checks the shape). */
export function parseJsonField(text: string | undefined): JsonParse {
  const trimmed = text?.trim() ?? "";
  if (trimmed === "") return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(trimmed) };
  } catch (error) {
    return {
      ok: false,
      message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** JSON for a textarea, readable. */
export const prettyJson = (value: unknown) => JSON.stringify(value ?? {}, null, 2);
