/**
 * What a command's `run` returns: its result, and what kind of result it is.
 * The command never prints and never asks for the output mode; the front end
 * (./present.ts) decides the mode once and picks the face to show.
 *  - a document: one value, printed as the JSON document under `--json`, or
 *    through its plain face (pipes, CI, and terminals too: no document
 *    command has an Ink face);
 *  - a live result: something shown while it happens (`logs --follow`, the
 *    `wait` progress, `inspect --watch`, playback), with one renderer per
 *    mode; it may end in a further result (music's final state).
 */

/** Where a plain face writes: results to stdout, human text to stderr, a document as JSON. */
export interface TextSinks {
  out(text: string): void
  note(text: string): void
  json(document: unknown): void
  /** A document's JSON text in pieces, as made by its command (DocumentResult.printed), printed as it is; a piece is valid only until the next is taken. */
  jsonText(pieces: Iterable<Uint8Array>): void
}

export interface DocumentResult<T = unknown> {
  kind: 'document'
  /** The JSON document under `--json` (none: nothing on stdout then). */
  document: T | undefined
  /** The plain face of the document. */
  plain?: (document: T, to: TextSinks) => void
  /**
   * The document's JSON text, exactly what printing `document` would give,
   * when the command can make it without building `document` (`inspect
   * --json` from cached text); the JSON mode then prints this instead. Its
   * pieces may share one buffer: each is valid only until the next is taken.
   */
  printed?: () => Iterable<Uint8Array>
  /** Human text on stderr in every mode, before anything else (e.g. why a launch failed). */
  notes?: string
  /** The exit code the result means, set once it was shown. */
  exitCode?: number
}

/** One renderer per output mode; each resolves once the stream ended, with what to show after it. */
export interface LiveResult {
  kind: 'live'
  json(): Promise<CommandResult>
  plain(): Promise<CommandResult>
  /** The TTY face (loads ink and react lazily); absent: the plain renderer there too. */
  ink?(): Promise<CommandResult>
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CommandResult = DocumentResult<any> | LiveResult | undefined

/** A document result with its plain face. */
export function documentResult<T>(
  document: T | undefined,
  plain?: (document: T, to: TextSinks) => void,
  options: {notes?: string; exitCode?: number} = {},
): DocumentResult<T> {
  return {kind: 'document', document, plain, ...options}
}

/**
 * A document result whose document is read only if a face needs it: the
 * JSON mode prints `printed()` (see DocumentResult.printed), the plain face
 * gets `read()`, read once on first use.
 */
export function printedDocumentResult<T>(
  read: () => T,
  printed: () => Iterable<Uint8Array>,
  plain: (document: T, to: TextSinks) => void,
): DocumentResult<T> {
  let document: T | undefined
  return {
    kind: 'document',
    get document() {
      return (document ??= read())
    },
    plain,
    printed,
  }
}

/** A live result (see LiveResult). */
export function liveResult(renderers: Omit<LiveResult, 'kind'>): LiveResult {
  return {kind: 'live', ...renderers}
}

/** Nothing more to show, only an exit code (a stream that ended). */
export function exitResult(exitCode: number | undefined, notes?: string): DocumentResult {
  return {kind: 'document', document: undefined, notes, exitCode}
}
