// What dist/mcp-server.cjs leaves out of the MCP SDK: the schemas nothing in it reads.
//
// The SDK (@modelcontextprotocol/server 2 and core) defines every schema of
// every protocol revision, OAuth's included, as top-level constants built by
// zod calls, and fills a public lookup table of all of them (`specTypeSchemas`,
// `isSpecType`) at load. A bundler must keep a call it cannot prove free of
// side effects, and the table refers to every schema, so each start of
// `actors mcp` built about 1,070 zod objects, most of which the server never
// reads: about 11 ms of the first tools/call (46 ms instead of 58 on a
// 2-core machine, where `node -e 0` takes 21).
//
// So, in the SDK's own files as the bundler reads them:
//  - the table is left empty: its two filling loops are removed, and the
//    table itself is replaced by one that throws on use, naming this file
//    (the server never reads it; if a later SDK did, it fails loudly);
//  - each top-level `const NAME = EXPR;` whose EXPR is more than a literal
//    becomes `const NAME = /* @__PURE__ */ (() => (EXPR))();`, so the bundler
//    drops the constants nothing refers to. Schema constructors have no
//    effect beyond their value (zod's describe() also notes the description
//    in its global registry, which only JSON Schema conversion of that very
//    schema reads).
// Everything the server reaches is kept as written and runs in the same order.
// The SDK files are matched by name and shape: a newer SDK whose files differ
// fails the build here, with what to check, rather than building something else.
import {readFileSync} from 'node:fs'

/** Files of the SDK whose top-level constants are made droppable. */
const SDK_FILES = /@modelcontextprotocol\/(core|server)\/dist\/(schemas|auth|src)-[^/]+\.mjs$/
/** The server's copy of core, which holds the lookup table. */
const TABLE_FILE = /@modelcontextprotocol\/server\/dist\/src-[^/]+\.mjs$/

const TABLE_EDITS = [
  ['for (const key of SPEC_SCHEMA_KEYS) register(key, schemas_exports[key]);', ''],
  ['for (const [key, schema] of Object.entries(authSchemas)) register(key, schema);', ''],
  [
    'const specTypeSchemas = Object.freeze(_specTypeSchemas);',
    'const specTypeSchemas = notBundled("specTypeSchemas");',
  ],
  ['const isSpecType = Object.freeze(_isSpecType);', 'const isSpecType = notBundled("isSpecType");'],
]
const NOT_BUNDLED = `function notBundled(name) {
  return new Proxy({}, {get(_, key) {
    if (typeof key === "symbol") return undefined;
    throw new Error(\`the MCP SDK's \${name} is left out of actors' bundle (scripts/mcp-sdk-unused.mjs): read \${name}.\${key} elsewhere\`);
  }});
}
`

/** A top-level line that starts a new statement (the SDK's files are formatted: one statement starts at column 0). */
const STATEMENT_START = /^(const |let |var |function |async function |class |export |import |for |if |\/\/|\/\*|\*)/
/** An initializer with nothing to drop: a literal (string, number, array literal) or one already marked. */
const LITERAL = /^(["'`\d[-]|true\b|false\b|null\b|\/\*)/

/**
 * Wrap each top-level `const NAME = EXPR;` of `source` (EXPR not a literal) in a
 * pure arrow function called in place. Returns the text and how many were wrapped.
 */
export function pureTopLevelConsts(source) {
  const lines = source.split('\n')
  const out = []
  let wrapped = 0
  for (let i = 0; i < lines.length; i++) {
    const head = /^const ([\w$]+) = (.*)$/.exec(lines[i])
    if (!head || LITERAL.test(head[2])) {
      out.push(lines[i])
      continue
    }
    // The statement ends on the first line ending with `;` that a new statement (or a blank line) follows.
    let end = i
    while (
      end < lines.length - 1 &&
      !(lines[end].endsWith(';') && (lines[end + 1] === '' || STATEMENT_START.test(lines[end + 1])))
    )
      end++
    if (!lines[end].endsWith(';')) throw new Error(`const ${head[1]} has no end the build can find`)
    const expression = [head[2], ...lines.slice(i + 1, end + 1)].join('\n').slice(0, -1)
    // The expression keeps its own lines: line numbers in the SDK's files stay as they were.
    out.push(`const ${head[1]} = /* @__PURE__ */ (() => (${expression}))();`)
    wrapped++
    i = end
  }
  return {text: out.join('\n'), wrapped}
}

/** The esbuild plugin: the SDK's files as described above. */
export const mcpSdkUnused = {
  name: 'mcp-sdk-unused',
  setup(b) {
    b.onLoad({filter: SDK_FILES}, (args) => {
      let text = readFileSync(args.path, 'utf8')
      if (TABLE_FILE.test(args.path)) {
        for (const [from, to] of TABLE_EDITS) {
          if (!text.includes(from))
            return {
              errors: [
                {
                  text: `${args.path} no longer holds \`${from}\`: check how this MCP SDK fills specTypeSchemas and update scripts/mcp-sdk-unused.mjs`,
                },
              ],
            }
          text = text.replace(from, to)
        }
        text += `\n${NOT_BUNDLED}`
      }
      try {
        return {contents: pureTopLevelConsts(text).text, loader: 'js'}
      } catch (error) {
        return {errors: [{text: `${args.path}: ${error.message} (scripts/mcp-sdk-unused.mjs)`}]}
      }
    })
  },
}
